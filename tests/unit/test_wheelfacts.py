def test_ld_preload_names_the_libraries_per_provider() -> None:
    from provisioner.wheelfacts import parse_ld_preload

    text = (
        "from ctypes import CDLL, RTLD_GLOBAL\n"
        "try:\n"
        '    _libcublas = CDLL("libcublas.so.11", mode=RTLD_GLOBAL)\n'
        '    _libcudart = CDLL("libcudart.so.11.0", mode=RTLD_GLOBAL)\n'
        "except OSError:\n"
        "    import os\n"
        '    os.environ["ORT_CUDA_UNAVAILABLE"] = "1"\n'
        "try:\n"
        '    _libnvinfer = CDLL("libnvinfer.so.8", mode=RTLD_GLOBAL)\n'
        "except OSError:\n"
        "    import os\n"
        '    os.environ["ORT_TENSORRT_UNAVAILABLE"] = "1"\n'
    )
    assert parse_ld_preload(text) == {
        "cuda": ("libcublas.so.11", "libcudart.so.11.0"),
        "tensorrt": ("libnvinfer.so.8",),
    }
    assert parse_ld_preload("# nothing preloaded\n") == {}
    assert parse_ld_preload("def broken(:\n") == {}
