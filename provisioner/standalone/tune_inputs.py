"""Shared by the tune child: the inputs a tune feeds a model, made with numpy alone (or read from the user's files).

Random noise hides what matters (padding a page with grey changes what a text detector finds; noise has no text
to find), so where the model is recognisable the inputs look like its data:

- "page" (an OCR text detector: an image input, a map out): a light page with dark lines of text, drawn from a
  small bitmap glyph table (5x7 Latin letters and digits) and stroke-built CJK-like glyphs, in paragraphs of
  different type sizes, normalised as RapidOCR's detector does: (pixel / 255 - 0.5) / 0.5, channels first;
- "line" (a text-line recogniser: an image input, a sequence out): one line of text 48 pixels high, the glyphs
  ~30 pixels tall, normalised the same way (RapidOCR's TextRecognizer.resize_norm_img);
- "random": deterministic noise of the input's type (images in [-1, 1]; integers in [0, 10)).

Every input is a function of (kind, dims, seed): each tune child makes the same arrays again. No PIL, no cv2: the
target may have neither. `--inputs DIR` (load_folder) reads .npy / .npz always, and images when PIL or cv2 can
be imported in the target (resized and normalised as RapidOCR does for the model's kind).

Padding (`pad`): at the end of each dimension, with zeros (what a normalised grey means) or with the array's own
edge values (numpy's mode "edge": a page's own background continues).
"""

from __future__ import annotations

import math
import os

if __package__:  # a package member: provisioner.standalone (ortprov's tests)
    from . import tensor_types
else:  # run as a script: its folder is sys.path[0]
    import tensor_types  # type: ignore[no-redef]

KINDS = ("page", "line", "random")
LINE_HEIGHT = 48  # RapidOCR's rec_img_shape [3, 48, 320]
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
ARRAY_EXTENSIONS = (".npy", ".npz")
DET_LIMIT_SIDE = 736  # RapidOCR 1.4.4 config.yaml, Det: limit_side_len 736, limit_type min
DET_MAX_SIDE = 2000  # Global: max_side_len

# 5x7 bitmaps, one string of rows per glyph ("#" ink); a space is an empty cell
LATIN = {
    "A": ".###.|#...#|#...#|#####|#...#|#...#|#...#",
    "B": "####.|#...#|#...#|####.|#...#|#...#|####.",
    "C": ".###.|#...#|#....|#....|#....|#...#|.###.",
    "D": "###..|#..#.|#...#|#...#|#...#|#..#.|###..",
    "E": "#####|#....|#....|####.|#....|#....|#####",
    "F": "#####|#....|#....|####.|#....|#....|#....",
    "G": ".###.|#...#|#....|#.###|#...#|#...#|.####",
    "H": "#...#|#...#|#...#|#####|#...#|#...#|#...#",
    "I": ".###.|..#..|..#..|..#..|..#..|..#..|.###.",
    "K": "#...#|#..#.|#.#..|##...|#.#..|#..#.|#...#",
    "L": "#....|#....|#....|#....|#....|#....|#####",
    "M": "#...#|##.##|#.#.#|#.#.#|#...#|#...#|#...#",
    "N": "#...#|#...#|##..#|#.#.#|#..##|#...#|#...#",
    "O": ".###.|#...#|#...#|#...#|#...#|#...#|.###.",
    "P": "####.|#...#|#...#|####.|#....|#....|#....",
    "R": "####.|#...#|#...#|####.|#.#..|#..#.|#...#",
    "S": ".####|#....|#....|.###.|....#|....#|####.",
    "T": "#####|..#..|..#..|..#..|..#..|..#..|..#..",
    "U": "#...#|#...#|#...#|#...#|#...#|#...#|.###.",
    "W": "#...#|#...#|#...#|#.#.#|#.#.#|#.#.#|.#.#.",
    "a": ".....|.....|.###.|....#|.####|#...#|.####",
    "e": ".....|.....|.###.|#...#|#####|#....|.###.",
    "i": "..#..|.....|.##..|..#..|..#..|..#..|.###.",
    "n": ".....|.....|#.##.|##..#|#...#|#...#|#...#",
    "o": ".....|.....|.###.|#...#|#...#|#...#|.###.",
    "r": ".....|.....|#.##.|##..#|#....|#....|#....",
    "s": ".....|.....|.###.|#....|.###.|....#|####.",
    "t": ".#...|.#...|###..|.#...|.#...|.#..#|..##.",
    "0": ".###.|#...#|#..##|#.#.#|##..#|#...#|.###.",
    "1": "..#..|.##..|..#..|..#..|..#..|..#..|.###.",
    "2": ".###.|#...#|....#|...#.|..#..|.#...|#####",
    "3": "#####|...#.|..#..|...#.|....#|#...#|.###.",
    "4": "...#.|..##.|.#.#.|#..#.|#####|...#.|...#.",
    "5": "#####|#....|####.|....#|....#|#...#|.###.",
    "7": "#####|....#|...#.|..#..|.#...|.#...|.#...",
    "8": ".###.|#...#|#...#|.###.|#...#|#...#|.###.",
    "9": ".###.|#...#|#...#|.####|....#|...#.|.##..",
}
CJK_GLYPHS = 48  # stroke-built glyphs on an 8x8 grid (radicals, bars, hooks), seeded


def _bitmap(np, rows):  # type: ignore[no-untyped-def]
    return np.array([[c == "#" for c in row] for row in rows.split("|")], dtype=bool)


def _cjk(np, index):  # type: ignore[no-untyped-def]
    """A CJK-like glyph: horizontal and vertical bars, a box radical or a side stroke, on an 8x8 grid."""
    rng = np.random.RandomState(1000 + index)
    grid = np.zeros((8, 8), dtype=bool)
    for _ in range(rng.randint(2, 4)):  # horizontal bars
        row, start = rng.randint(0, 8), rng.randint(0, 3)
        grid[row, start : rng.randint(start + 3, 9)] = True
    for _ in range(rng.randint(1, 3)):  # vertical bars
        col, start = rng.randint(0, 8), rng.randint(0, 3)
        grid[start : rng.randint(start + 3, 9), col] = True
    if rng.randint(0, 2):  # a box radical on the left
        grid[1:5, 0] = grid[1:5, 2] = grid[1, 0:3] = grid[4, 0:3] = True
    else:  # a falling stroke
        for step in range(rng.randint(3, 7)):
            grid[min(7, 1 + step), max(0, 6 - step)] = True
    return grid


class Glyphs:
    """The glyph table at native resolution: Latin 5x7 (padded to 7x6 cells), CJK-like 8x8 (8x9 cells)."""

    def __init__(self, np) -> None:  # type: ignore[no-untyped-def]
        self.np = np
        self.latin = [np.pad(_bitmap(np, rows), ((0, 0), (0, 1))) for rows in LATIN.values()]
        self.cjk = [np.pad(_cjk(np, i), ((0, 0), (0, 1))) for i in range(CJK_GLYPHS)]

    def line(self, rng, cells: int, cjk: bool):  # type: ignore[no-untyped-def]
        """A line of `cells` glyph cells at native resolution (words and spaces), as a bool array."""
        np = self.np
        table = self.cjk if cjk else self.latin
        height = table[0].shape[0]
        blank = np.zeros((height, table[0].shape[1]), dtype=bool)
        parts: list = []
        word = 0
        for _ in range(cells):
            if word <= 0:
                word = rng.randint(2, 9) if not cjk else rng.randint(4, 14)
                if parts:
                    parts.append(blank)
                    continue
            parts.append(table[rng.randint(0, len(table))])
            word -= 1
        return np.concatenate(parts or [blank], axis=1)


_GLYPHS: dict = {}


def glyphs(np):  # type: ignore[no-untyped-def]
    if "table" not in _GLYPHS:
        _GLYPHS["table"] = Glyphs(np)
    return _GLYPHS["table"]


def _scaled(np, bitmap, height: int):  # type: ignore[no-untyped-def]
    """A native bitmap scaled to `height` rows (nearest neighbour, the width in proportion), as ink in [0, 1]
    softened at the stroke edges (a 2x2 box filter: anti-aliased type, not hard pixels)."""
    rows, cols = bitmap.shape
    width = max(1, int(round(cols * height / rows)))
    ys = (np.arange(height) * rows // height).clip(0, rows - 1)
    xs = (np.arange(width) * cols // width).clip(0, cols - 1)
    ink = bitmap[ys][:, xs].astype("float32")
    soft = ink.copy()
    soft[1:, :] += ink[:-1, :]
    soft[:, 1:] += ink[:, :-1]
    soft[1:, 1:] += ink[:-1, :-1]
    return soft / 4.0


def _background(np, rng, height: int, width: int):  # type: ignore[no-untyped-def]
    """Paper: a light tone with a gentle gradient and a little sensor noise (grey levels 0-255)."""
    tone = rng.uniform(228.0, 250.0)
    ys = np.linspace(-1.0, 1.0, height, dtype="float32")[:, None]
    xs = np.linspace(-1.0, 1.0, width, dtype="float32")[None, :]
    shade = rng.uniform(-6.0, 6.0) * ys + rng.uniform(-6.0, 6.0) * xs
    noise = rng.normal(0.0, 2.5, size=(height, width)).astype("float32")
    return np.clip(tone + shade + noise, 0.0, 255.0)


def make_page(np, height: int, width: int, seed: int):  # type: ignore[no-untyped-def]
    """A text page of height x width grey levels (0-255): margins, paragraphs of lines of Latin or CJK-like
    text in type 14-40 pixels tall, ragged line ends, blank lines between paragraphs."""
    rng = np.random.RandomState(seed)
    page = _background(np, rng, height, width)
    table = glyphs(np)
    left = int(width * rng.uniform(0.04, 0.09))
    right = width - int(width * rng.uniform(0.04, 0.09))
    y = int(height * rng.uniform(0.04, 0.08))
    while True:
        size = int(rng.choice([14, 16, 18, 20, 24, 28, 32, 40]))
        cjk = bool(rng.randint(0, 3) == 0)
        ink_level = rng.uniform(15.0, 70.0)
        lines = rng.randint(1, 7)
        for number in range(lines):
            if y + size >= height - int(height * 0.04):
                return page
            column = right - left
            fill = rng.uniform(0.85, 1.0) if number < lines - 1 else rng.uniform(0.2, 0.8)
            cell = size * (9 if cjk else 6) / (8 if cjk else 7)
            cells = max(1, int(column * fill / cell))
            ink = _scaled(np, table.line(rng, cells, cjk), size)[:, : max(1, column)]
            region = page[y : y + ink.shape[0], left : left + ink.shape[1]]
            region -= ink[: region.shape[0], : region.shape[1]] * (region - ink_level)
            y += int(size * rng.uniform(1.35, 1.9))
        y += int(size * rng.uniform(0.8, 2.0))


def make_line(np, height: int, width: int, seed: int):  # type: ignore[no-untyped-def]
    """A text line as a recogniser sees it: `height` rows, glyphs ~5/8 of that tall, text across the width
    (a short margin at each end), light background."""
    rng = np.random.RandomState(seed)
    line = _background(np, rng, height, width)
    size = max(5, int(round(height * rng.uniform(0.56, 0.7))))
    cjk = False  # the CJK-like glyphs are no real characters: a recogniser reads blanks where they stand
    margin = max(1, int(height * 0.15))
    cell = size * (9 if cjk else 6) / (8 if cjk else 7)
    cells = max(1, int((width - 2 * margin) / cell))
    ink = _scaled(np, glyphs(np).line(rng, cells, cjk), size)[:, : max(1, width - 2 * margin)]
    top = (height - size) // 2
    region = line[top : top + ink.shape[0], margin : margin + ink.shape[1]]
    region -= ink[: region.shape[0], : region.shape[1]] * (region - rng.uniform(15.0, 70.0))
    return line


def normalise(np, grey):  # type: ignore[no-untyped-def]
    """RapidOCR's normalisation: (pixel / 255 - 0.5) / 0.5, so paper is near +1 and ink near -1."""
    return (grey.astype("float32") / 255.0 - 0.5) / 0.5


def image_axes(dims: list) -> tuple | None:
    """(height, width, channel) positions of an image input's dims: rank 4, 1/3/4 channels first or last."""
    if len(dims) != 4:
        return None
    if dims[1] in (1, 3, 4):
        return 2, 3, 1
    if dims[3] in (1, 3, 4):
        return 1, 2, 3
    return None


def _as_input(np, planes: list, dims: list, axes: tuple):  # type: ignore[no-untyped-def]
    """Batch entries (each a normalised height x width plane) shaped to the input's dims."""
    height_at, width_at, channel_at = axes
    channels = dims[channel_at]
    stacked = np.stack([np.stack([plane] * channels) for plane in planes])  # N, C, H, W
    if channel_at == 3:
        stacked = stacked.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(stacked, dtype="float32")


def make_array(np, kind: str, type_name: str, dims: list, seed: int):  # type: ignore[no-untyped-def]
    """The input of one run: `kind` (page, line, random) at `dims` of onnxruntime type `type_name`."""
    dtype = tensor_types.NUMPY_TYPES.get(type_name)
    if dtype is None:
        raise ValueError(f"type {type_name}, which ortprov cannot generate")
    axes = image_axes(dims)
    if kind in ("page", "line") and axes is not None and dtype.startswith("float"):
        height, width = dims[axes[0]], dims[axes[1]]
        draw = make_page if kind == "page" else make_line
        planes = [normalise(np, draw(np, height, width, seed * 7 + n)) for n in range(dims[0])]
        return _as_input(np, planes, dims, axes).astype(dtype)
    rng = np.random.RandomState(seed)
    if dtype.startswith("float"):
        return (rng.random_sample(dims) * 2.0 - 1.0).astype(dtype)
    if dtype == "bool":
        return rng.randint(0, 2, size=dims).astype(bool)
    return rng.randint(0, 10, size=dims).astype(dtype)


def make_feed(np, kind: str, specs: list, entry: dict, index: int) -> dict:  # type: ignore[no-untyped-def]
    """One run's feed: input name -> array; a fixed input left out of `entry` is made at its fixed shape."""
    feed = {}
    for position, spec in enumerate(specs):
        dims = entry.get(spec["name"])
        if dims is None:
            dims = [d if isinstance(d, int) and d >= 0 else 1 for d in spec["shape"]]
        try:
            feed[spec["name"]] = make_array(np, kind, spec["type"], list(dims), index * 101 + position)
        except ValueError as exc:
            raise ValueError("input {!r} has {}".format(spec["name"], exc)) from None
    return feed


# ---------------------------------------------------------------- padding


def pad(np, array, target: list, mode: str = "zero"):  # type: ignore[no-untyped-def]
    """`array` padded at the end of each dimension to `target`: with zeros, or with its own edge values."""
    if list(array.shape) == list(target):
        return array
    widths = [(0, max(0, t - n)) for n, t in zip(array.shape, target)]  # noqa: B905 - Python 3.8
    if mode == "edge":
        return np.pad(array, widths, mode="edge")
    out = np.zeros(target, dtype=array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def padded_feed(np, feed: dict, run_shape: dict | None, mode: str = "zero") -> dict:  # type: ignore[no-untyped-def]
    """The feed padded to the run shape (the inputs it does not name stay as they are)."""
    if not run_shape:
        return feed
    return {name: pad(np, array, run_shape[name], mode) if name in run_shape else array for name, array in feed.items()}


# ---------------------------------------------------------------- the user's files


def image_reader():  # type: ignore[no-untyped-def]
    """A function path -> RGB uint8 array (PIL, else cv2), and its name; (None, None) when neither imports."""
    try:
        from PIL import Image

        def read_pil(path):  # type: ignore[no-untyped-def]
            with Image.open(path) as image:
                return image.convert("RGB"), "PIL"

        return read_pil, "PIL"
    except ImportError:
        pass
    try:
        import cv2

        def read_cv2(path):  # type: ignore[no-untyped-def]
            found = cv2.imread(path, cv2.IMREAD_COLOR)
            if found is None:
                raise ValueError("cv2 cannot read it")
            return found, "cv2"

        return read_cv2, "cv2"
    except ImportError:
        return None, None


def _resize(np, image, library: str, height: int, width: int):  # type: ignore[no-untyped-def]
    """RGB uint8 (H, W, 3) at the new size, bilinear."""
    if library == "PIL":
        from PIL import Image

        return np.asarray(image.resize((width, height), Image.BILINEAR))
    import cv2

    return cv2.resize(image, (width, height))


def _size_of(np, image, library: str) -> tuple:  # type: ignore[no-untyped-def]
    return (image.size[1], image.size[0]) if library == "PIL" else image.shape[:2]


def det_size(height: int, width: int) -> tuple:
    """RapidOCR 1.4.4's detector size for an image: the longer side capped at 2000, the shorter raised to 736,
    each side rounded to a multiple of 32."""
    if max(height, width) > DET_MAX_SIDE:
        ratio = DET_MAX_SIDE / max(height, width)
        height, width = int(height * ratio), int(width * ratio)
    ratio = DET_LIMIT_SIDE / min(height, width) if min(height, width) < DET_LIMIT_SIDE else 1.0
    return max(32, int(round(int(height * ratio) / 32) * 32)), max(32, int(round(int(width * ratio) / 32) * 32))


def load_image(np, path: str, kind: str, spec: dict):  # type: ignore[no-untyped-def]
    """An image file as the model's input: a page resized as RapidOCR's detector does, a line to 48 pixels
    high (width in proportion); normalised, channels as the input declares."""
    read, _ = image_reader()
    if read is None:
        raise ValueError("reading images needs PIL or cv2 in the target (neither imports): use .npy files")
    image, library = read(path)
    height, width = _size_of(np, image, library)
    declared = list(spec["shape"])
    axes = image_axes([d if isinstance(d, int) and d > 0 else 0 for d in declared]) or (2, 3, 1)
    if kind == "line":
        fixed_height = declared[axes[0]] if isinstance(declared[axes[0]], int) and declared[axes[0]] > 0 else None
        new_height = fixed_height or LINE_HEIGHT
        size = (new_height, max(8, int(math.ceil(new_height * width / float(height)))))
    else:
        size = det_size(height, width)
    rgb = _resize(np, image, library, size[0], size[1]).astype("float32")
    if library == "cv2":
        rgb = rgb[:, :, ::-1]  # cv2 reads BGR; RapidOCR feeds what cv2 reads, so keep its order
    planes = (rgb / 255.0 - 0.5) / 0.5  # H, W, 3
    channels = declared[axes[2]] if isinstance(declared[axes[2]], int) and declared[axes[2]] > 0 else 3
    planes = planes[:, :, :channels] if channels <= 3 else np.concatenate([planes, planes[:, :, :1]], axis=2)
    array = planes.transpose(2, 0, 1)[None] if axes[2] == 1 else planes[None]
    return np.ascontiguousarray(array, dtype="float32")


def list_folder(folder: str) -> list:
    """The input files of a folder, sorted by name: arrays (.npy, .npz) and images."""
    names = sorted(os.listdir(folder))
    return [n for n in names if n.lower().endswith(ARRAY_EXTENSIONS + IMAGE_EXTENSIONS) and not n.startswith(".")]


NPY_MAGIC = b"\x93NUMPY"  # how every .npy starts (NumPy's format), and every member of an .npz
ZIP_MAGIC = b"PK\x03\x04"  # an .npz is a zip of .npy files


def read_array(np, path: str):  # type: ignore[no-untyped-def]
    """np.load of a .npy or .npz, never of pickled objects; ValueError in our words when it is not one (NumPy's
    own message for pickled data advises loading it unsafely: that advice is never passed on)."""
    with open(path, "rb") as handle:
        start = handle.read(len(NPY_MAGIC))
    expected = ZIP_MAGIC if path.lower().endswith(".npz") else NPY_MAGIC
    if not start.startswith(expected):
        what = "an .npz (a zip of .npy arrays)" if expected == ZIP_MAGIC else "a .npy array file"
        raise ValueError(f"is not {what}: it does not start as one (save it with numpy.save or numpy.savez)")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(_npy_words(str(exc))) from None
    except (OSError, EOFError) as exc:
        raise ValueError(f"cannot be read as a NumPy array: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a zip that is not one (BadZipFile), a header that is not
        raise ValueError(f"is not a readable NumPy file ({type(exc).__name__})") from None


def _array_of(archive, name: str):  # type: ignore[no-untyped-def]
    try:
        return archive[name]
    except ValueError as exc:
        raise ValueError(f"member {name!r}: {_npy_words(str(exc))}") from None


def _npy_words(said: str) -> str:
    if "pickle" in said.lower():
        return "holds Python objects (pickled), not numbers: ortprov reads plain arrays only (numpy.save of one)"
    return "is not a NumPy array file ({})".format(said.split(". ")[0].rstrip("."))


def load_file(np, path: str, kind: str, specs: list) -> dict:  # type: ignore[no-untyped-def]
    """One file as one run's feed: a .npy for a one-input model, a .npz keyed by input name, an image."""
    lower = path.lower()
    if lower.endswith(".npz"):
        with read_array(np, path) as archive:
            feed = {name: _array_of(archive, name) for name in archive.files}
        missing = [s["name"] for s in specs if s["name"] not in feed]
        if missing:
            raise ValueError("holds no array for input {} (it has: {})".format(missing[0], ", ".join(sorted(feed))))
        return {s["name"]: feed[s["name"]] for s in specs}
    if len(specs) != 1:
        names = ", ".join(s["name"] for s in specs)
        raise ValueError(f"the model has {len(specs)} inputs ({names}): give a .npz with one array per input")
    spec = specs[0]
    array = read_array(np, path) if lower.endswith(".npy") else load_image(np, path, kind, spec)
    dtype = tensor_types.NUMPY_TYPES.get(spec["type"])
    if dtype is not None and str(array.dtype) != dtype:
        raise ValueError("holds {} values, input {!r} takes {}".format(array.dtype, spec["name"], dtype))
    if len(array.shape) != len(spec["shape"]):
        raise ValueError(
            "has {} dimensions, input {!r} has {}".format(len(array.shape), spec["name"], len(spec["shape"]))
        )
    return {spec["name"]: array}
