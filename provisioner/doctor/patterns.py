"""The log vocabulary: the wordings programs print for each kind of fact, grouped by what they show. Pure data.

Patterns run on normalised lines (provisioner/doctor/normalize.py: prefixes gone, wrapped lines joined, quotes as
ASCII). Every repeat is bounded ({0,N}) and none is nested, so a hostile line costs linear time. Facts that are
tables live in the matrix, not here: CUDA and cuBLAS error numbers (cuda.yaml `errors`), GPU names (gpus.yaml),
library names and families (standalone/libnames.py), which build needs which CUDA.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml


def _compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """ASCII classes (\\w, \\d, \\b, \\s): a name next to Chinese or Japanese text ("报错出现在cudnn64_8.dll里面") is a
    name of its own, and a library's name never takes in the CJK characters before it."""
    return re.compile(pattern, flags | re.ASCII)


Q = r"[\"']"  # a quote (normalised to ASCII)
LIB = r"[\w.+-]{1,120}\.(?:dll|so(?:\.\d{1,6}){0,4})"  # a library file name
SO = r"[\w.+-]{1,120}\.so(?:\.\d{1,6}){0,4}"

# --- libraries: the one that failed to load and the one that is missing --------------------------------------
# (loader, missing): "Failed to load library X with error: Y: cannot open", "Could not load library X. Error: Y:
# cannot open", "Error loading "X" which depends on "Y" which is missing"
LOADER_AND_MISSING = (
    _compile(
        rf"(?:Failed to load|Could not load|Unable to load|cannot load) (?:shared )?(?:library |module )?{Q}?"
        rf"(?<![\w.+-])({LIB}){Q}?[.,]?\s{{0,3}}(?:with error|Error|error)\s{{0,3}}:?\s{{0,3}}(?<![\w.+-])({SO})"
        r"\s{0,4}:\s{0,4}(?:cannot open|file too short|invalid ELF|wrong ELF class)",
        re.I,
    ),
    _compile(rf"Error loading {Q}?[^\"'\n]{{0,300}}?(?<![\w.+-])({LIB}){Q}? which depends on {Q}?({LIB}){Q}?", re.I),
)
# a file that is missing itself
MISSING = (
    _compile(
        rf"(?<![\w.+-])({SO})\s{{0,4}}:\s{{0,4}}(?:cannot open shared object file|file too short|invalid ELF|"
        r"wrong ELF class)",
        re.I,
    ),
    _compile(rf"{Q}?(?<![\w.+-])([\w.+-]{{1,120}}\.dll){Q}? which is missing", re.I),
    _compile(rf"error while loading shared libraries: (?<![\w.+-])({SO})", re.I),
    _compile(rf"(?<![\w.+-])({SO})\s{{0,4}}=>\s{{0,4}}not found", re.I),  # ldd
    _compile(rf"{Q}(?<![\w.+-])([\w.+-]{{1,120}}\.dll){Q} (?:not found|was not found)", re.I),
    # TensorFlow-style "Could not load dynamic library 'libnvinfer.so.5'": that very file
    _compile(rf"Could not load dynamic library {Q}?(?<![\w.+-])({LIB})", re.I),
    _compile(
        rf"(?<![\w.+-])({LIB}){Q}?\s(?:in\s[\w ]{{1,20}}\s)?(?:could not|cannot|can'?t|couldn'?t) be "
        r"(?:found|located|loaded)",
        re.I,
    ),
    _compile(
        r"\b(?<![\w.+-])([\w.+-]{1,120}\.dll) (?:was not found|is missing|could not be found|not found|missing\b)",
        re.I,
    ),
    _compile(rf"Please make sure (?<![\w.+-])({LIB}) is in your library path", re.I),
    _compile(rf"Could not locate (?<![\w.+-])({LIB})", re.I),
    _compile(rf"kernel32\.LoadLibrary\(\):{Q}?(?<![\w.+-])({LIB}){Q}? not found", re.I),
    _compile(rf"Unable to load any of \{{\s{{0,2}}(?<![\w.+-])({LIB})", re.I),  # cuDNN 9's loader: the candidates
    _compile(rf"failed to open (?<![\w.+-])({SO})", re.I),  # NVRTC's builtins
    # CTranslate2 (faster-whisper, often beside onnxruntime): "Library cublas64_11.dll is not found or cannot be loaded"
    _compile(rf"Library (?<![\w.+-])({LIB}) is not found or cannot be loaded", re.I),
    _compile(rf"(?:找不到|缺少|缺失|未找到)\s?{Q}?(?<![\w.+-])({LIB})", re.I),
    # said in words: "it reports lost of libcudnn.so.9", "file not found \"libcublas.so.11\"", "libcudnn.so.8 is
    # missing"
    _compile(rf"\b(?:lost|lack|missing|absence)\s(?:of\s)?(?:the\s)?`?{Q}?(?<![\w.+-])({LIB})", re.I),
    _compile(rf"\bnot found:?\s{{1,2}}`?{Q}?(?<![\w.+-])({LIB})", re.I),
    _compile(rf"(?<![\w.+-])({SO}){Q}?`?\s(?:is\s|was\s)?(?:missing|not found)\b", re.I),
)
# a library that was being loaded and failed, its missing dependency unnamed (Windows error 126, "Could not load
# library X", "Failed to load library X")
LOADING = (
    _compile(
        rf"LoadLibrary failed with error \d{{1,5}} {Q}?[^\n]{{0,200}}? when trying to load {Q}?[^\"'\n]{{0,300}}?"
        rf"(?<![\w.+-])({LIB}){Q}?",
        re.I,
    ),
    _compile(
        rf"(?:Could not (?:load|locate|find)|Failed to load|Unable to load|cannot load) (?:shared )?"
        rf"(?:library |module )?{Q}?(?<![\w.+-])({LIB})",
        re.I,
    ),
    _compile(rf"(?:unable to|failed to|could not|cannot) dlopen {Q}?(?<![\w.+-])({SO})", re.I),
    # ctypes (Windows, Python 3.8+): "Could not find module 'C:\...\cudnn64_9.dll' (or one of its dependencies)"
    _compile(
        rf"Could not find module {Q}?[^\"'\n]{{0,300}}?(?<![\w.+-])({LIB}){Q}? \(or one of its dependencies\)", re.I
    ),
    # the JVM: "java.lang.UnsatisfiedLinkError: C:\...\onnxruntime_providers_cuda.dll: Can't find dependent libraries"
    _compile(rf"UnsatisfiedLinkError:[^\n]{{0,300}}?(?<![\w.+-])({LIB}):? Can'?t find dependent libraries", re.I),
)
# a library file a listing shows on disk (find, ls, locate, dir): the line ends with its path
FILE_ON_DISK = _compile(
    rf"(?:^|\s)(?:[A-Za-z]:)?[\\/.~]?[\w.+-]{{0,80}}[\\/](?:[\w.+ -]{{1,80}}[\\/]){{0,20}}({LIB})"
    r"(?:\s{1,4}->\s{1,4}\S{1,200})?\s{0,4}$"
)
COMMAND_LINE = _compile(  # a command that names a file (to link, copy, export it) does not show it is there
    r"(?:^|[\s`'\"])(?:ln|cp|mv|rm|export|set|echo|chmod|patchelf|mklink)\s{1,4}-{0,2}\w", re.I
)
# a line reporting a failure names what is missing, not what is there
NOT_FOUND_WORDS = _compile(
    r"cannot open|can't open|not found|missing|failed|error|unable|could not|no such|doesn'?t exist|not exist", re.I
)
SONAME_MAJOR = _compile(r"\.so\.(\d{1,4})|(?:64|_)(\d{1,4})(?:_\d{1,4})?\.dll$", re.I)

# the Windows loader's words for an error number, in the languages it prints them in (messages.yaml: one home)
_WINDOWS_ERRORS: dict[int, list[str]] = yaml.load(
    Path(__file__).with_name("messages.yaml").read_text(encoding="utf-8"),
    Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
)["windows_errors"]


def _windows_words(number: int) -> str:
    """The error's number as Windows, Python and .NET print it, or its words in any language (spaces flexible)."""
    words = (r"\s{0,2}".join(re.escape(part) for part in text.split()) for text in _WINDOWS_ERRORS[number])
    return rf"(?:WinError|error|Error code:?) {number}\b|" + "|".join(words)


DLL_INIT = _compile(
    _windows_words(1114) + r"|(?:dynamic link library \(DLL\)|DLL) initiali[sz]ation routine failed", re.I
)
PROVIDER_DLL = _compile(r"onnxruntime_providers_(?:cuda|tensorrt)\.dll", re.I)
# the user says a library file is there: "cudnn_cnn_infer64_8.dll directory is there", "the dll exists in bin"
INIT_CALL = _compile(r"cudaGetDeviceCount|cudaSetDevice|cudaGetDevice\b|cuInit|device_count", re.I)  # CUDA's first
PRESENT_SAID = _compile(
    r"\.dll\b[^\n]{0,40}\b(?:is|are)\s(?:there|present|in (?:the|my) (?:path|folder|directory))|"
    r"\.dll\b[^\n]{0,30}\bexists?\b",
    re.I,
)
CUDNN8_WINDOWS_PART = _compile(r"^cudnn_\w{2,12}64_8\.dll$", re.I)  # cuDNN 8.3+'s parts: they load zlibwapi.dll
PRELOAD_FRAME = _compile(r"_ld_preload\.py[\"']?, line \d{1,5}")
CDLL_CALL = _compile(r"\bCDLL\(\s{0,3}[\"'](" + SO + r")[\"']")
MODULE_NOT_FOUND = _compile(
    r"LoadLibrary failed with error 126|"
    + _windows_words(126)
    # the native module did not load (old releases only warned), so its names are missing: a dependency is
    + rf"|cannot import name {Q}\w{{1,40}}{Q} from {Q}onnxruntime\.capi\._pybind_state|0x8007007E|"
    # Python's ctypes and the JVM word error 126 their own way (the JVM's for a DLL other than ONNX Runtime's own)
    + r"\(or one of its dependencies\)|"
    + r"(?<![\w.+-])(?!onnxruntime(?:4j_jni)?\.dll)[\w.+-]{1,120}\.dll:? Can'?t find dependent libraries",
    re.I,
)
PROC_NOT_FOUND = _compile(_windows_words(127), re.I)  # an entry point missing: an older copy of a DLL was loaded
BAD_IMAGE = _compile(_windows_words(193), re.I)
# onnxruntime's Python module could not load (its own DLL or what it links: since 1.9 CUDA is loaded later, by
# the provider, so what is missing is the Visual C++ runtime, or one too old: "procedure could not be found")
PYBIND_IMPORT = _compile(
    r"DLL load failed while importing onnxruntime_pybind11_state|"
    r"Cannot load onnxruntime\.capi\. Error: 'DLL load failed|onnxruntime_pybind11_state[^\n]{0,40}DLL load failed",
    re.I,
)
# a traceback's frame importing onnxruntime's native module, and a DLL load failure naming another module
ORT_NATIVE_FRAME = _compile(r"onnxruntime_pybind11_state|onnxruntime[\\/]capi[\\/]_pybind_state", re.I)
OTHER_MODULE_IMPORT = _compile(r"DLL load failed while importing (?!onnxruntime)\w", re.I)
# ONNX Runtime's own library (not a provider's) could not be loaded by .NET or Java: a dependency of it is missing
CORE_DLL_FAILED = _compile(
    rf"Unable to load DLL {Q}?onnxruntime(?:\.dll)?{Q}?(?![\w.])|DllNotFoundException[^\n]{{0,80}}onnxruntime(?![\w.])|"
    r"onnxruntime(?:4j_jni)?\.dll:? Can'?t find dependent libraries",
    re.I,
)
ZLIBWAPI = _compile(
    r"\bzlibwapi(?:64)?(?:\.dll)?\b|\bzlib123\w{0,10}|\bzlib\s?dll\b", re.I
)  # named at all: only its absence makes anyone name it
# a Windows process ended by a fast-fail abort (STATUS_STACK_BUFFER_OVERRUN, as exit code or NTSTATUS): what cuDNN 8.3+
# does when it cannot load zlibwapi.dll
WINDOWS_ABORT = _compile(
    r"(?<!\d)-1073740791(?!\d)|0xC0000409|(?<!\d)3221226505(?!\d)|STATUS_STACK_BUFFER_OVERRUN", re.I
)
# the process faulted inside a cuDNN 8 DLL (Windows' event log, a debugger, the user's words): cuDNN 8.3+ aborts in
# its first convolution when zlibwapi.dll is missing
CUDNN8_FAULT = _compile(
    r"(?:Faulting module (?:name|path)|Unhandled exception|未经处理的异常|Exception code|Exception thrown at|"
    r"crash\w{0,3}|异常|崩溃|"
    r"报错出现)[^\n]{0,160}?(?<![\w.+-])(cudnn\w{0,24}64_8\.dll)|"
    r"(?<![\w.+-])(cudnn\w{0,24}64_8\.dll)[^\n]{0,40}(?:crash|异常|崩溃)",
    re.I,
)
# the program ends with no error when the GPU is used (a console's abort message lost): cuDNN 8.3+ aborting on Windows
SILENT_EXIT = _compile(
    r"(?:exits?|exited|quits?|closes?|closed|crash(?:es|ed)?|terminat\w{1,5}|stops?|stopped|dies|died)\s(?:\w{1,10}\s){0,3}"
    r"(?:without (?:any )?(?:error|message|exception|output|warning|log)|silently)|"
    r"silently (?:exits?|exited|quits?|crash\w{0,3}|closes?|dies|died|stops?)|闪退|直接退出|没有任何报错",
    re.I,
)
# an entry point missing from the C++ runtime or onnxruntime's own module: an older Visual C++ runtime was loaded
ENTRY_POINT_MISSING = _compile(
    r"procedure entry point[^\n]{0,200}could not be located in the dynamic link library[^\n]{0,200}"
    r"(?:msvcp\d{0,3}|vcruntime\d{0,3}\w{0,3}|onnxruntime\w{0,30})\.(?:dll|pyd)",
    re.I,
)
MSVC_ABSENT = _compile(
    r"Visual C\+\+ (?:Redistributable|runtime)[^\n]{0,30}(?:is )?not installed|"
    r"(?:missing|not installed|install)[^\n]{0,12} (?:the )?(?:Microsoft )?Visual C\+\+ Redistributable|"
    # installing or updating the runtime fixed it: it was missing or too old
    r"(?:install|updat|upgrad)\w{0,4}[^\n]{0,40}(?:Visual C\+\+|VC\+\+|vc_?redist|MSVC)[^\n]{0,80}"
    r"(?:fix|solv|work|resolv)|(?:fix|solv|resolv)\w{0,4}[^\n]{0,40}(?:install|updat|upgrad)\w{0,4}[^\n]{0,40}"
    r"(?:Visual C\+\+|VC\+\+|vc_?redist|MSVC)|"
    # a crash inside the runtime while onnxruntime's DLL starts: a copy older than the one it was built with (1.18 and
    # later need 14.40+: std::mutex's constructor changed), e.g. an app packaging its own old msvcp140.dll
    r"(?:msvcp140|vcruntime140)(?:_\d)?(?:\.dll)?\)?[^\n]{0,40}(?:Access violation|0xC0000005)|"
    r"(?:Access violation|0xC0000005)[^\n]{0,60}\(?(?:msvcp140|vcruntime140)|msvcp140!mtx_do_lock",
    re.I,
)

# --- the provider: which build, and did it load ----------------------------------------------------------------
# The CUDA provider library exists and was loaded (its dependency failed, or it reported a CUDA error): only a GPU
# build has it. Windows' "CUDA_PATH is set but CUDA wasn't able to be loaded" is the GPU build's message too.
GPU_BUILD = _compile(
    r"Failed to create CUDAExecutionProvider|CUDA_PATH is set but CUDA wasn'?t able to be loaded|"
    r"(?:Failed to load library|LoadLibrary failed with error \d{1,5}[^\n]{0,200}when trying to load|Error loading)"
    r"[^\n]{0,300}onnxruntime_providers_cuda\.(?:so|dll)[\"']?\s{0,3}(?:with error|which depends)|"
    r"onnxruntime[/\\]core[/\\]providers[/\\]cuda[/\\]|cuda_call\.cc|cuda_execution_provider\.cc|"
    r"TryGetProviderInfo_CUDA\][^\n]{0,300}with error: (?!libonnxruntime_providers_cuda)|"
    r"CUDA (?:failure|error) \d|cudaError[A-Z]",
    re.I,
)
# the code asks for a provider by a name ONNX Runtime does not know ("cuda" for CUDAExecutionProvider): whatever the
# setup, the session runs on the CPU
UNKNOWN_PROVIDER = _compile(
    r"Unknown Provider Type: (?!\w{2,20}ExecutionProvider\b)\w{1,30}|"
    r"Unknown provider name: (?!\w{2,20}ExecutionProvider\b)\w{1,30}",
    re.I,
)
PROVIDER_FAILED = _compile(
    r"Failed to create (CUDA|Tensorrt)ExecutionProvider|Failed to load (?:library|shared library)[^\n]{0,200}"
    r"onnxruntime_providers_(cuda|tensorrt)|(?:Ort)?SessionOptionsAppendExecutionProvider_(Cuda|Tensorrt)\w{0,4}: "
    r"Failed to load shared library|Attempt to set CUDAExecutionProvider failed|"
    r"CUDA_PATH is set but CUDA wasn'?t able to be loaded|"
    r"Failed to load shared library|"
    r"(?:fail\w{0,3}|cannot|can'?t|could not|unable to|error)[^\n]{0,60}onnxruntime_providers_(cuda|tensorrt)\.dll|"
    r"Failed to start ONNX Runtime with CUDA|registering `?CUDAExecutionProvider`?[^\n]{0,20}(?:failed|error)",
    re.I,
)
TENSORRT_FAILED = _compile(
    r"(?:EP Error|Failed to create|Failed to load)[^\n]{0,400}(?:Tensorrt|TensorRT)|"
    r"when using \['TensorrtExecutionProvider'\]|onnxruntime_providers_tensorrt",
    re.I,
)
# TensorRT ran and failed on the model (an engine it could not build, a runtime error): TensorRT is there, so this is
# no missing TensorRT; its loading failing (the provider's library, libnvinfer, "Please install TensorRT") is
TENSORRT_RAN = _compile(
    r"(?:failed to|could not|unable to|cannot) (?:create|build|deserialize) (?:the )?engine|engine from network|"
    r"TensorRT EP (?:failed|could not|execution context|input)|enqueue|Exception during initialization|"
    r"Assertion[^\n]{0,40}failed|TensorRT[^\n]{0,40}(?:unsupported|does not support|not supported)",
    re.I,
)
TENSORRT_LOAD = _compile(
    r"Failed to load|LoadLibrary|cannot open|install TensorRT|nvinfer|ProviderLibrary::Get|error 126|not found",
    re.I,
)
# onnxruntime's Python fallback: "EP Error ... when using ['X', ...]" then "Falling back to ['Y', ...] and retrying."
WHEN_USING = _compile(r"when using \[([^\]\n]{0,300})\]", re.I)
FALLING_BACK = _compile(r"Falling back to \[([^\]\n]{0,300})\]", re.I)
# a provider list said in words: "only Azure and CPU as the execution providers", "get_available_providers() only
# shows CPUExecutionProvider" (read on a line about the available providers, or naming Azure's: a CPU build's list)
_CPU_OR_AZURE = r"'?(?:Azure|CPU)(?:ExecutionProvider|EP)?'?"
PROSE_CPU_LIST = _compile(
    rf"\b(?:only|just)\s(?:the\s)?(?:(?:shows?|lists?|returns?|gives?|has|have|get|see)\s)?\[?{_CPU_OR_AZURE}"
    rf"(?:\s?(?:and|&|,)\s?{_CPU_OR_AZURE})?\]?(?:\s(?:as\s)?(?:the\s)?(?:execution\s)?providers?\b|\s?$|[,.;)]|"
    r"\s(?:even|although|though|but|while|despite|instead|when|and\snot|no\s)\b)|"
    rf"providers?\s(?:is|are)\s(?:only|just)\s\[?{_CPU_OR_AZURE}|"
    # "EXECUTION PROVIDERS only azure  and cpu, not have cuda"
    rf"providers?\s{{1,3}}(?:only|just)\s{{1,3}}{_CPU_OR_AZURE}(?:\s{{1,3}}(?:and|&|,)\s{{1,3}}{_CPU_OR_AZURE})?",
    re.I,
)
# a session said to have run on the CUDA provider: only a GPU build has it ("session ran on CUDAExecutionProvider")
RAN_ON_CUDA = _compile(
    r"(?<!not )(?<!n't )\b(?:ran|runs|running|executed|was using|is using|used|uses) on (?:the )?'?"
    r"CUDAExecutionProvider",
    re.I,
)
CUDA_APPLIED = _compile(
    r"(?:Applied|Current|Using|session) providers?:?\s{0,3}\[\s{0,3}'CUDAExecutionProvider'",
    re.I,
)
CPU_ONLY_BUILD = _compile(
    r"(?:CUDA|GPU)(?: execution provider)? is not enabled in this build|CUDA execution provider is not enabled|"
    r"not (?:compiled|built) with (?:CUDA|GPU)|compile (?:it )?with GPU|"
    r"compile with -D\w{0,40}(?:GPU|CUDA)\w{0,20}=ON|"
    r"(?:compile|build|built|need|needs|requires?)\w{0,3}\s(?:it\s|onnxruntime\s|a\sversion\s)?with GPU support|"
    r"compile ONNX ?Runtime with (?:CUDA|GPU)|"
    # an application's choices built from the available providers: "invalid choice: 'cuda' (choose from 'azure', 'cpu')"
    r"invalid choice: '(?:cuda|gpu)' \(choose from (?:'(?:azure|cpu|openvino|dml|directml|coreml)'(?:,\s?)?){1,5}\)|"
    # onnxruntime-node without its CUDA provider: "[cuda] backend not found", "invalid backend name: cuda"
    r"\[cuda\] backend not found|invalid backend name: '?cuda\b|"
    # Rust's ort crate built without its cuda feature
    r"CUDA(?:ExecutionProvider)?[^\n]{0,40}not registered because its corresponding (?:Cargo )?feature is not enabled|"
    r"Specified provider 'CUDAExecutionProvider' is not in available provider names|"
    r"onnxruntime_providers_cuda\.(?:dll|so)['\"]?\s{0,3}(?:does not exist|not exist|is missing)|"
    # .NET / C: the loaded onnxruntime library has no CUDA entry point: a CPU build
    r"(?:Unable to find an entry point|EntryPointNotFound|找不到名为|入口点)[^\n]{0,120}"
    r"OrtSessionOptionsAppendExecutionProvider_CUDA|"
    r"OrtSessionOptionsAppendExecutionProvider_CUDA[^\n]{0,80}(?:入口点|entry point)|"
    # an application's own check of the available providers
    r"GPU is not supported by your ONNX ?Runtime build|"
    # audio-separator's: "CUDAExecutionProvider not available in ONNXruntime, so acceleration will NOT be enabled"
    r"CUDA\s?ExecutionProvider (?:is\s)?not available in ONNX ?runtime|"
    # said in words: "ONNX Runtime without CUDA EP", "No CUDAExecutionProvider available"
    r"(?:ONNX ?Runtime|\bORT)(?:\s\(ORT\))?\s(?:without|lacks?|has no|with no)\s(?:the\s|a\s)?CUDA\s?"
    r"(?:EP\b|execution provider|ExecutionProvider)|"
    r"\bNo CUDA\s?(?:EP|ExecutionProvider|execution provider)\s(?:is\s)?(?:available|listed|in the available)|"
    # the user says the CPU package is what is installed: "installed onnxruntime instead of onnxruntime-gpu",
    # "onnxruntime 1.17.0 (CPU)", "cpu版本的onnxruntime"
    r"onnxruntime(?![-_.A-Za-z0-9])\s(?:instead of|rather than)\s(?:the\s)?onnxruntime[-_]gpu|"
    r"onnxruntime(?![-_.A-Za-z0-9])[`'\"]?(?:(?:,\s?|\s)not\s|\s?(?:而?不是|而非)\s?)(?:the\s)?[`'\"]?onnxruntime[-_]gpu|"
    # the fix swapped the CPU package for the GPU one: "install onnxruntime-gpu instead of onnxruntime", "replace
    # onnxruntime with onnxruntime-gpu in requirements.txt"
    r"onnxruntime[-_]gpu\s(?:instead of|rather than|in place of)\s(?:the\s)?onnxruntime(?![-_.A-Za-z0-9])|"
    r"(?:replac|chang|switch|swap)\w{0,3}\s(?:the\s)?onnxruntime(?![-_.A-Za-z0-9])\s(?:package\s)?(?:with|to|for|by)\s"
    r"(?:the\s)?onnxruntime[-_]gpu|"
    r"onnxruntime(?:\sversion)?\s\d{1,2}\.\d{1,3}(?:\.\d{1,3})?\s?\((?:CPU|CPU[- ]only)\)|"
    r"cpu\s?版(?:本)?的?\s?onnxruntime(?![-_.A-Za-z0-9])|onnxruntime(?![-_.A-Za-z0-9])\s?的?\s?cpu\s?版|"
    r"get_device\(\)[^\n]{0,20}(?:returns|=|:|->)\s{0,3}'?CPU\b'?|"
    r"(?:using|use|have|installed|install)\s(?:the\s)?CPU(?:[- ]only)?\s(?:version|build|package)\sof\sonnxruntime|"
    r"onnxruntime(?![-_.\w])\s\(?CPU\)?\s(?:version|build|package|v?\d{1,2}\.\d{1,3})\b|"
    r"(?:installed |the )onnxruntime(?![-_.\w])\s(?:package\s)?(?:is|was)\s(?:the\s|a\s)?CPU(?:[- ]only)?\s"
    r"(?:version|build|package)",
    re.I,
)
# ultralytics' requirement check installs the CPU package when it does not see "onnxruntime" installed
AUTOUPDATE_CPU = _compile(
    r"requirements?[^\n]{0,40}\[?'onnxruntime'\]? not found, attempting AutoUpdate|"
    r"pip install[^\n]{0,40}[\"']onnxruntime[\"'](?![-_])|"
    # the same cause in words: the CPU package was installed (beside the GPU one)
    r"install\w{0,6}[^\n]{0,30}(?:the )?(?:cpu[- ]version of onnxruntime|onnxruntime \((?:non-gpu|cpu)[^)\n]{0,12}\)|"
    r"cpu[- ]only onnxruntime)",
    re.I,
)
# a call whose answer follows on the next line (a REPL, or a user pasting "I get GPU" under the call), and that answer:
# `ort.get_device()` -> 'CPU' (a CPU build) or 'GPU'; a session's `get_providers()` -> the providers it runs with
DEVICE_CALL = _compile(r"get_device\(\)[\s)`'\";]{0,6}$", re.I)
SESSION_CALL = _compile(r"\bget_providers\(\)[\s)`'\";]{0,6}$", re.I)
_ANSWER_SAID = (
    r"(?:(?:I|it|this|that)\s(?:\w{1,8}\s)?(?:get|got|see|saw|returns?|returned|gives?|gave|prints?|printed|shows?|"
    r"showed|outputs?|says?)\s|(?:will|would)\s(?:return|print|give|show)\s|"
    r"(?:returns?|output|result|answer)\s{0,2}:?\s{1,2}|[-=]>\s{0,2})?"
)
DEVICE_ANSWER = _compile(rf"^{_ANSWER_SAID}[`'\"]?(CPU|GPU)[`'\"]?\.?(?:\s(?:but|and|however)\b[^\n]{{0,20}})?$", re.I)
SESSION_ANSWER = _compile(
    rf"^{_ANSWER_SAID}[`'\"\[(]{{0,3}}((?:'?\w{{2,20}}ExecutionProvider'?[,\s]{{0,3}}){{1,6}})[`'\"\])]{{0,3}}\.?$"
)
# a requirements list or a listing with bare names: one line "onnxruntime", another "onnxruntime-gpu"
# (requirements.txt; pyproject's `onnxruntime = "^1.16"` or `"onnxruntime>=1.16",`)
BARE_CPU_ROW = _compile(
    r"^[-*+\s]{0,4}onnxruntime\s{0,2}(?:[<>=~!]=?\s{0,2}[\d.*]{1,20})?\s{0,4}$|"
    r"^\s{0,8}onnxruntime\s{0,2}=\s{0,2}[\"'{]|^\s{0,8}[\"']onnxruntime(?:\s{0,2}[<>=~!^][^\"'\n]{0,30})?[\"'],?\s{0,4}$",
    re.I,
)
# the fix that worked: removing the CPU package (while onnxruntime-gpu stays)
CPU_REMOVED_FIXED = _compile(
    r"uninstall\w{0,3}[^\n]{0,30}(?<![A-Za-z0-9])onnxruntime(?![-_.A-Za-z0-9])[^\n]{0,80}(?:fix|solv|work|resolv)|"
    r"(?:fix|solv|resolv)\w{0,4}[^\n]{0,40}(?:by |after )?uninstall\w{0,3}[^\n]{0,20}"
    r"(?<![A-Za-z0-9])onnxruntime(?![-_.A-Za-z0-9])",
    re.I,
)
# an install command of the CPU package alone: pip/uv/poetry/conda, Maven's onnxruntime artifact, NuGet's CPU package
CPU_INSTALL = _compile(
    r"(?:^|[\s!$>])(?:pip3?|uv pip|uv|poetry|conda|mamba)\s{1,3}(?:install|add)\s{1,3}(?:-{1,2}[\w-]{1,30}\s{1,3}){0,4}"
    r"onnxruntime(?![-_.A-Za-z0-9])(?![^\n]{0,80}onnxruntime[-_]gpu)|<artifactId>onnxruntime</artifactId>|com\.microsoft\.onnxruntime:onnxruntime:|"
    r"PackageReference\s{1,3}Include=\"Microsoft\.ML\.OnnxRuntime\"|dotnet add package Microsoft\.ML\.OnnxRuntime\s",
    re.I,
)
# the CPU package required by a project ("requirements.txt has onnxruntime>=1.15", "depends on onnxruntime==1.17")
# and said in words ("in your requirements.txt there's only onnxruntime")
CPU_REQUIRED = _compile(
    r"(?<![\w.-])onnxruntime(?![-_.\w])\s{0,2}(?:[<>=~!]=|[<>])\s{0,2}\d|"
    r"requirements(?:\.txt)?\s(?:there'?s|there is|has|lists|contains|is|says|pins)\s(?:only|just)\s[`'\"]?"
    r"onnxruntime(?![-_.\w])|(?:only|just)\s[`'\"]?onnxruntime(?![-_.\w])[`'\"]?\s(?:is\s)?in\s(?:the\s|your\s|its\s)?"
    r"requirements",
    re.I,
)
# a CUDA provider an application found missing from the available ones (its check of get_available_providers)
CUDA_UNAVAILABLE = _compile(
    r"CUDA(?:ExecutionProvider)?\s(?:is\s)?not\s(?:available|found|in (?:the )?available)[^\n]{0,60}"
    r"(?:fall(?:ing)?\s?back|us(?:e|ing) CPU|CPUExecutionProvider)",
    re.I,
)
# the user says the CPU package is what they installed or use ("I installed onnxruntime 1.17", not onnxruntime-gpu)
CPU_INSTALLED_SAID = _compile(
    r"\bI(?:'ve|'m| have| had| am)?\s(?:\w{1,10}\s){0,2}(?:installed|install|use|using)\s(?:the\s)?"
    r"onnxruntime(?![-_.\w])(?:\s(?:package|version|v?\d{1,2}\.\d{1,3}))?",
    re.I,
)
# the CUDA provider failing, said in words
PROVIDER_FAILED_SAID = _compile(
    r"(?:fail\w{0,3}|unable|can'?t|cannot|couldn'?t|not able)\s(?:to\s)?"
    r"(?:create|load|initiali[sz]e|register|use|start|enable)\s(?:the\s)?(?:CUDA|GPU)\s?(?:execution\s)?(?:provider|EP)\b|"
    r"(?:CUDA|GPU|the)\s(?:execution\s)?(?:provider|EP)\s(?:\w{1,10}\s)?(?:fails|failed|doesn'?t work|does not work|"
    r"is not working|won'?t load|cannot be (?:created|loaded))|"
    # Chinese: "CUDA路径已设置但无法加载CUDA" (CUDA_PATH is set but CUDA could not be loaded), "加载CUDA失败"
    r"无法加载\s?CUDA|CUDA\s?(?:执行提供程序|provider|EP)?\s?(?:加载|创建)失败|(?:加载|创建)\s?CUDA\s?(?:执行提供程序)?失败",
    re.I,
)
# nodes placed on the CPU, said in words ("some ops fall back to the CPU", "not supported by the CUDA EP")
NODES_ON_CPU_SAID = _compile(
    r"\b(?:nodes?|ops?|operators?|layers?|kernels?)\b[^\n]{0,40}(?:fall(?:s|ing)?\s?back|(?:run|placed|assigned|"
    r"executed)\s(?:on|to))\s(?:to\s)?(?:the\s)?CPU|not supported by (?:the )?(?:CUDA|GPU) (?:execution provider|EP|"
    r"provider)",
    re.I,
)
# a CUDA library said missing in words ("cuDNN not found", "missing cublas dll")
LIBRARY_SAID_MISSING = _compile(
    r"\b(cu?dnn|cublas(?:Lt)?|cudart|cufft|curand|nvrtc)\s?(?:dlls?|libraries|library|libs?|files?)?\s(?:is\s|was\s|are\s)?"
    r"(?:not found|missing|could not be found|can'?t be found|cannot be found|not installed)|"
    r"\bmissing\s(?:the\s)?(cu?dnn|cublas(?:Lt)?|cudart|cufft|curand|nvrtc)\b",
    re.I,
)
# what fixed it, in the user's words: installing (or updating, reinstalling) CUDA, cuDNN, the driver, zlib
_FIXED = (  # the change made it work (not "it works fine": a healthy setup described)
    r"(?:fix\w{0,4}|solv\w{0,4}|resolv\w{0,4}|(?:now|finally) (?:it |the \w{1,10} )?(?:\w{1,10} )?works|"
    r"works? (?:now|again)|working (?:now|again)|did the trick)"
)
_THING = (
    r"(?P<verb>install\w{0,3}|reinstall\w{0,3}|re-install\w{0,3}|updat\w{0,3}|upgrad\w{0,3}|download\w{0,3}|"
    r"add\w{0,3})\s(?:the\s|a\s|latest\s|newer\s|proper\s|correct\s){0,2}(?P<thing>CUDA(?:\s?toolkit)?|cu?DNN|"
    r"(?:NVIDIA\s|GPU\s)?drivers?|zlib\w{0,12})(?![a-z])"  # "install cuda10.2": a version may follow at once
)
THING = _compile(_THING, re.I)  # a step of a fix: "2. install cuda10.2 and cudnn 8.0.3"
# another onnxruntime build for the CUDA there fixed it ("I downgraded onnxruntime-gpu to the version matching my CUDA
# and it works"): the build was for another CUDA major
FIXED_BY_BUILD = _compile(
    r"(?:downgrad|degrad|upgrad|chang|switch|reinstall|install)\w{0,4}\s(?:\w{1,10}\s){0,2}onnx\w{0,10}(?:[-_]gpu)?\b"
    r"[^\n]{0,60}?(?:\b(?:suitable|matching|compatible|right|correct|proper)\s(?:\w{1,10}\s)?(?:version|build|wheel)|"
    r"\b(?:version|build|wheel)\s(?:that\s)?(?:match\w{0,3}|compatible with|for)\s(?:my|the)\s(?:installed\s)?CUDA)"
    rf"[^\n]{{0,60}}?(?:{_FIXED}|\bdid it\b)",
    re.I,
)
FIXED_BY = (  # "fixed it by installing cuDNN", "after installing CUDA 11.8 it works"
    _compile(rf"{_FIXED}[^\n]{{0,40}}\b(?:by|after|with|was|is)\s(?:\w{{1,10}}\s)?{_THING}", re.I),
    _compile(rf"{_THING}[^\n]{{0,60}}{_FIXED}", re.I),
)
# the fix told as a list: "I solved this problem by following steps:" then "1. ...", "2. install cuda10.2 ..."
FIXED_STEPS = _compile(
    rf"{_FIXED}[^\n]{{0,40}}\b(?:following|these|the below|below|next)\s(?:\w{{1,10}}\s)?steps?\b|"
    rf"\bsteps?\s(?:that\s|which\s)?(?:\w{{1,10}}\s)?{_FIXED}",
    re.I,
)
STEP = _compile(r"^\s{0,4}(?:\d{1,2}[.)]|[-*\u2022]|step\s\d{1,2}:?)\s", re.I)
# the CUDA an image ships ("a base image with CUDA 12", "the image uses cuda12"), and a fix that changed it ("fixes the
# problem by using a base image that ships CUDA 11.7")
IMAGE_CUDA = _compile(
    r"\bimage\s(?:\w{1,12}\s)?(?:with|that ships|shipping|ships|uses|using|based on|has|bundles|includes)\s(?:the\s)?"
    r"CUDA\s?(\d{1,2}(?:\.\d{1,2})?)(?![\d])",
    re.I,
)
FIXED_BY_IMAGE = _compile(
    rf"{_FIXED}[^\n]{{0,60}}\b(?:by|after|with)\s(?:\w{{1,10}}\s){{0,4}}image\s(?:that\s)?(?:ships|with|has|bundles|"
    r"includes|provides|of)\s(?:the\s)?CUDA\s?(\d{1,2})",
    re.I,
)
# the CUDA version a fix installed ("installing CUDA toolkit 11.8", "install cuda10.2")
CUDA_VERSION_NAMED = _compile(r"\bCUDA(?:\s?toolkit)?\s?v?(\d{1,2})(?:\.\d{1,2})?(?![\d])", re.I)
# conda's listing: a CUDA build of onnxruntime (conda-forge's build string "cuda120py311h..._200"), and the CUDA the
# environment pins (cudatoolkit, cuda-version, cuda-cudart rows): the build's major against the environment's
CONDA_CUDA_BUILD = _compile(
    r"^\s{0,4}onnxruntime(?:[-_]gpu)?\s{1,40}\d{1,4}\.\d{1,4}(?:\.\d{1,6})?\s{1,40}[\w.]{0,20}?cuda(1\d)\d{1,2}", re.I
)
CONDA_CUDA_ROW = _compile(
    r"^\s{0,4}(?:cudatoolkit|cuda-version|cuda-cudart|cuda-runtime|cuda-toolkit|cuda-nvcc)\s{1,40}(\d{1,2}\.\d{1,3})"
    r"(?:\.\d{1,6})?\s",
    re.I,
)
# the user says in words which CUDA the onnxruntime build is made for ("this onnxruntime build uses cuda11", "ORT
# 1.18.0 is linked against CUDA 11.8", "the wheel was compiled for CUDA 12"): a fact read from prose
BUILD_CUDA_SAID = _compile(
    # the build's libraries said not found: "the ONNX runtime was unable to find the CUDA 11 libraries"
    r"(?:onnx\s?runtime|\bORT)\b[^\n]{0,30}?\b(?:unable to|can'?t|cannot|could not|couldn'?t|fails? to|failed to)\s"
    r"(?:find|load|locate|open)\s(?:the\s)?CUDA\s?(1\d)\s(?:libraries|libs|dlls?|files|runtime)|"
    r"(?:onnxruntime|\bORT|onnxrt)(?:[-_ ]gpu)?\b[^\n]{0,30}?\b(?:build|wheel|package|binar(?:y|ies)|version|"
    r"\d\.\d{1,2}(?:\.\d{1,2})?)?\s?(?:is\s|was\s|are\s)?(?:uses|used|is linked against|linked against|"
    r"compiled (?:for|with|against)|built (?:for|with|against)|is for|made for|targets)\s(?:the\s)?"
    r"(?:CUDA\s?|cudaPackages_)(1\d)"  # nixpkgs names the CUDA it builds with: cudaPackages_12
    r"(?![\d])(?![^\n]{0,6}\?)",
    re.I,
)
# an undefined symbol a CUDA library exports, in the library that needs it ("libonnxruntime_providers_cuda.so: undefined
# symbol: nvrtcGetProgramLogSize", C++'s "_ZN5cudnn..."): that library meets another version of the symbol's library,
# or none (a versioned symbol is VERSION_NOT_DEFINED's)
UNDEFINED_CUDA_SYMBOL = _compile(
    rf"(?<![\w.+-])({LIB}):?\s{{0,2}}undefined symbol:?\s{{0,2}}(?:_ZN\d{{1,3}})?"
    r"(?P<family>cudnn|cublasLt|cublas|cufft|curand|nvrtc|cuda)(?=[A-Z_\d])\w{0,200}(?!\w|,\s?version)"
)
# the user says the GPU is not used (a symptom, not a cause)
GPU_UNUSED = _compile(
    r"(?:not|never|doesn'?t|does not|isn'?t|is not|won'?t)\s(?:\w{1,12}\s){0,2}"
    r"(?:use|using|run(?:ning)? on|utili[sz]\w{0,4})\s(?:the\s|my\s)?GPU|"
    r"(?:runs?|running|only)\s(?:\w{1,12}\s){0,2}on\s(?:the\s)?CPU|"
    r"\b(?:GPU|RTX\s?\d{3,4}|GTX\s?\d{3,4})\s(?:(?:is|was)\s(?:\w{1,10}\s)?not|isn'?t|wasn'?t)\s(?:being\s)?"
    r"(?:used|utili[sz]ed)\b|"
    r"CUDA(?:ExecutionProvider)?\s(?:is\s)?not\s(?:available|found|listed)|"
    r"(?:use|using|uses|runs? on|running on)\s(?:the\s|my\s)?CPU\s(?:instead of|rather than)\s(?:the\s|my\s)?GPU|"
    r"用的是\s?CPU|只(?:能)?用\s?CPU|(?:没有|没|未)(?:使用|用上?|调用)\s?GPU|GPU\s?(?:没有|没|未)(?:被)?(?:使用|调用|利用)|"
    r"(?:无法|不能)(?:使用|用)\s?GPU|GPU\s?不可用|"
    r"\bonly\s(?:the\s)?CPU\s(?:is|was|gets?|got)\s(?:being\s)?used\b",  # "when I run the model, only cpu is used"
    re.I,
)
# the JavaScript package (onnxruntime-node): its CUDA provider is a part of the Linux x64 package only
NODE_PACKAGE = _compile(r"onnxruntime-node\b", re.I)
# the GPU package installed where the program runs: an install command of it (a line of its own, as typed), or the
# user saying so ("I installed onnxruntime-gpu 1.17", "onnxruntime-gpu is installed", "已安装onnxruntime-gpu")
_GPU_PKG = r"(?:onnxruntime[-_]gpu|Microsoft\.ML\.OnnxRuntime\.Gpu)"
GPU_INSTALLED = _compile(
    r"^['`]?[$>#%!]{0,2}\s{0,3}(?:\([\w.-]{1,40}\)\s{1,3}){0,2}(?:[\w.:@\\/~-]{0,80}[>$#]\s{0,2})?"
    r"(?:python3?(?:\.exe)?\s{1,3}-m\s{1,3})?"
    r"(?:(?:pip3?|uv pip|uv|poetry|conda|mamba|pdm|pipenv)\s{1,3}(?:install|add)|"
    r"dotnet add(?: [\w.-]{1,60})? package|Install-Package|nuget install)\s"
    rf"(?:[^\n]{{0,80}}[\s\[,])?[\"']?{_GPU_PKG}|"
    # a project's dependency on it: .NET's PackageReference, Maven's artifactId, Gradle's coordinates
    rf"PackageReference\s{{1,3}}Include\s?=\s?[\"']{_GPU_PKG}|<artifactId>onnxruntime_gpu<|"
    r"com\.microsoft\.onnxruntime:onnxruntime_gpu\b|"
    r"(?:\bI(?:'ve|'d| have| had)?\s(?:\w{1,12}\s){0,2}|\band\s(?:then\s)?)"
    r"(?:installed|reinstalled|re-installed|install|am using|use|added)\s"
    rf"(?:the\s|latest\s|NuGet\s|packages?\s){{0,3}}[`'\"]?{_GPU_PKG}|"
    rf"{_GPU_PKG}[`'\"]?(?:\s?(?:==|v)?\s?\d{{1,2}}\.\d{{1,3}}(?:\.\d{{1,3}})?)?\s(?:is|was|has been|is already)\s"
    r"(?!not\b|never\b|no longer\b)"
    r"(?:\w{1,12}\s)?installed|(?:已经?|已)?(?:安装|装)了?\s?onnxruntime[-_]gpu",
    re.I,
)
# a dependency pulling the CPU package in: "rembg pulls in onnxruntime as a dependency" (with the GPU package named,
# both are installed; alone, the CPU package is)
CPU_PULLED_IN = _compile(
    r"(?:pulls?|pulled|brings?|brought|drags?|dragged|also\sinstall(?:s|ed)?)\s(?:in\s)?(?:the\s)?(?:CPU\s)?"
    r"(?:version of\s|package\s)?onnxruntime(?![-_.\w])|"
    # "exporters installs onnxruntime package", "the onnxruntime package is installed" (as another one's dependency)
    r"\binstalls\s(?:the\s)?[`'\"]?onnxruntime[`'\"]?(?![-_.\w])\spackage|"
    r"\bthe\s[`'\"]?onnxruntime[`'\"]?(?![-_.\w])\spackage\s(?:is|was|gets|got)\s(?:also\s)?(?:re)?installed",
    re.I,
)
# the CPU package uninstalled (pip's command or its report)
CPU_UNINSTALLED = _compile(
    r"Successfully uninstalled onnxruntime-\d|"
    r"uninstall\s{1,3}(?:-y\s{1,3})?onnxruntime(?![-_.\w])(?!\s{1,3}onnxruntime)",
    re.I,
)
# uninstalling both flavours in one command: both were installed (the fix for their clash)
_PKG_ARG = r"(?:(?!and\b|then\b|install\b)[\w-]{1,30}\s{1,3}){0,3}"  # other package names or flags of the command
UNINSTALL_BOTH = _compile(
    rf"uninstall\s{{1,3}}{_PKG_ARG}(?:onnxruntime\s{{1,3}}{_PKG_ARG}onnxruntime[-_]gpu|"
    rf"onnxruntime[-_]gpu\s{{1,3}}{_PKG_ARG}onnxruntime(?![-_.\w]))",
    re.I,
)
# a check or advice naming the GPU package, not a statement that it is installed
INSTALL_CHECK = _compile(
    r"(?:check|make sure|ensure|verify|whether|if|please|should|need to|must|have to)\s(?:that\s|if\s)?(?:the\s|you\s)?"
    r"(?:\w{1,12}\s)?onnxruntime[-_]gpu",
    re.I,
)
GPU_PACKAGE = _compile(r"onnxruntime[-_.]gpu|OnnxRuntime\.Gpu", re.I)  # the GPU package named (installed, tried)
PROVIDER_NAME = _compile(r"\b(\w{2,20})ExecutionProvider\b")
BRACKETED = _compile(r"[\[(]([^\[\]()\n]{0,600})[\])]")
NAMES_ONLY = _compile(r"[\s>*•\-\[\](),.\"']{0,200}")  # what is left of a list once its names are taken out
AVAILABLE = _compile(r"availab|可用|build has|available lists", re.I)
# a session's providers (what it runs with), and the providers code asks for (a request, not a result)
SESSION_LIST = _compile(
    r"get_providers?\(\)|\bget_provider\b|session\w{0,12}\sproviders?|providers?\s(?:is|are|used|in use)\b|"
    r"(?:Applied|Current|Using|selected|used|actual)\s(?:execution\s)?providers?|providers?\s(?:of|for) the session",
    re.I,
)
PROVIDERS_REQUESTED = _compile(r"providers\s?=\s?\[|InferenceSession\(|set_providers\(|SessionOptions", re.I)
AFTER_HEADER = _compile(r"providers?\s{0,3}(?:are|:|=)\s{0,3}([^\n]{0,600})$", re.I)

# --- when the log was written ---------------------------------------------------------------------------------
# a record's timestamp at the start of a line (ONNX Runtime's "2023-04-03 11:29:55.0674790 [E:onnxruntime:...",
# Python's logging), or nvidia-smi's header ("Mon Apr  3 12:31:03 2023"): the day the program ran
LOG_DATE = _compile(r"^[\[(]?(20[1-3]\d)-(0[1-9]|1[0-2])-([0-3]\d)[ T]\d{2}:\d{2}:\d{2}")
SMI_DATE = _compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s{1,2}(\d{1,2})\s"
    r"\d{2}:\d{2}:\d{2}\s(20[1-3]\d)\s*$"
)

# --- versions the log states ------------------------------------------------------------------------------------
REQUIRE = _compile(r"Require cuDNN (\d{1,2})[\d.*x]{0,8} and CUDA (\d{1,2})[\d.*x]{0,8}", re.I)
# onnxruntime's preload_dlls() on the torch beside it: "The installed PyTorch 2.5.1+cu121 uses CUDA 12.x, but
# onnxruntime-gpu is built with CUDA 13.x"
TORCH_OTHER_CUDA = _compile(
    r"PyTorch\s\S{1,40}\suses CUDA (\d{1,2})[\d.x]{0,6}, but onnxruntime-gpu is built with CUDA (\d{1,2})", re.I
)
# a build named by its CUDA: "onnxruntime-win-x64-cuda12-1.17.1", "onnxruntime-gpu 11.8", "onnxruntime-gpu (CUDA 12)"
BUILD_CUDA = _compile(
    r"onnxruntime[-_](?:linux|win|windows)[-_]x64[-_](?:gpu[-_])?cuda[-_]?(\d{2})|"
    r"onnxruntime[-_]gpu\s{0,3}(?:==|for|built for|with|\(|:)?\s{0,3}(?:cuda\s{0,2})?(\d{2})\.\d(?!\.\d)|"
    r"onnxruntime-gpu[^\n]{0,12}\bcu(\d{2})\d?\b|"
    r"\bcuda[-_](1\d)\s(?:feature|build|variant|package)|"  # a build chosen by its CUDA: "the cuda-13 feature"
    # said of the build: "onnxruntime-gpu 1.20 requires CUDA 12", "the GPU package is built for CUDA 11.8"
    r"onnxruntime[-_]gpu[^\n]{0,30}?\b(?:requires|needs|is built (?:for|with)|built (?:for|with)|wants)\s"
    r"(?:CUDA\s?)(1\d)\b",
    re.I,
)
# a release asset or a stated version of ONNX Runtime: "onnxruntime-linux-x64-gpu-1.17.3", "ONNX Runtime version:
# 1.10.0", "onnxruntime-gpu==1.19.0", "Microsoft.ML.OnnxRuntime.Gpu 1.17.1", "onnxruntime_gpu-1.8.0.jar"
ORT_STATED = _compile(
    r"onnxruntime[-_](?:linux|win|windows|osx)[-_](?:x64|aarch64|arm64)[-_](gpu[-_]|cuda\d{0,2}[-_])?"
    r"(1\.\d{1,2}(?:\.\d{1,2})?)|"
    r"(?:ONNX ?Runtime|onnxruntime)([-_. ]gpu)?(?: version)?\s{0,3}(?:==|:|v|\s|的?版本(?:是|为|:|号)?)\s{0,3}"
    r"(1\.\d{1,2}(?:\.\d{1,2})?)\b|"
    r"onnxruntime([-_]gpu)[-_](1\.\d{1,2}(?:\.\d{1,2})?)\.jar|OnnxRuntime(\.Gpu)\s{1,3}(1\.\d{1,2}(?:\.\d{1,2})?)",
    re.I,
)
# the issue template of microsoft/onnxruntime: a header line, then its value on a following line
TEMPLATE_HEADER = _compile(
    r"^#{0,4}\s{0,3}(ONNX Runtime Version or Commit ID|Execution Provider Library Version|OS Version|Platform|"
    r"Architecture|ONNX Runtime API)\s{0,3}$",
    re.I,
)
NVIDIA_SMI = _compile(
    r"Driver Version:\s{0,4}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\s{0,40}(?:CUDA Version:\s{0,4}(\d{1,2}\.\d{1,2}|N/A))?",
    re.I,
)
DRIVER_PROSE = _compile(r"(?:nvidia|driver|驱动)[^\n\d]{0,24}?\b(?:v|version\s)?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b", re.I)
# words around a CUDA major that make it what is asked for, not what is installed
ASKED_BEFORE = _compile(
    r"(?:looking for|look for|search(?:es|ing)? for|requires?|requiring|needs?|wants?|expects?|built (?:for|with)|"
    r"compiled (?:for|with)|made for|supports?)\s(?:the\s)?$",
    re.I,
)
ASKED_AFTER = _compile(r"\s?(?:files?|librar(?:y|ies)|DLLs?|\.so|binar(?:y|ies)|build)\b", re.I)
TENSORRT_SAID = _compile(r"\bTensorRT[\s:=v-]{1,4}(\d{1,2})\.\d{1,2}(?:\.\d{1,3}){0,2}\b", re.I)  # a version
CUDA_MAJOR_SAID = _compile(r"\bcuda[ -]?(9|1[0-4])\b(?![.\d])", re.I)  # "I have CUDA 12", "cuda13": a major only
NVCC = _compile(
    r"(?:compilation tools, release\s|release|nvcc[^\n\d]{0,30}|cuda[_ -]?toolkit[^\n\d]{0,12}|CUDA[\\/]v|cuda-|"
    r"CUDA_PATH[^\n\d]{0,40}v"
    r"|cuda[ _]?(?:version)?:?\s?|cuda\s?(?:is|=|==|是|版本是?|版本为)\s?)(\d{1,2}\.\d)\b",
    re.I,
)
# a framework's report of the CUDA runtime it runs with, and of the driver's ("Driver API Version: 11.2, Runtime API
# Version: 10.1", Paddle; "CUDA runtime version: 11.8", "CUDA Runtime Version = 11080")
RUNTIME_API = _compile(r"Runtime (?:API )?Version\s{0,2}[:=]\s{0,2}(\d{1,2}\.\d{1,2})\b", re.I)
DRIVER_API = _compile(r"Driver API Version\s{0,2}[:=]\s{0,2}(\d{1,2}\.\d{1,2})\b", re.I)
TORCH_CUDA = _compile(r"\btorch[\s=:-]{1,20}\d{1,2}\.\d{1,2}(?:\.\d{1,3})?\+cu(\d{2,3})\b|\+cu(\d{2,3})\b", re.I)
CUDNN_STATED = _compile(
    r"cu?dnn(?:\s{0,3}(?:version|ver\.?|v)?\s{0,3}[:=]{0,2}\s{0,3}|[\w-]{0,12}\s{1,3})(\d{1,2}(?:\.\d{1,3}){0,3}|\d{4,5})"
    r"(?!\w|\.[\w*])|cudnn(\d)-cuda|libcudnn(\d)\b",
    re.I,
)
# "CUDA/cuDNN version: 10.2/8"
CUDA_SLASH_CUDNN = _compile(
    r"CUDA\s?/\s?cu?DNN[^\n\d]{0,20}(\d{1,2}(?:\.\d{1,2})?)\s?/\s?(\d{1,2}(?:\.\d{1,3}){0,3}|\d{4,5})", re.I
)
DIST_BODY = (
    r"(onnxruntime(?:[-_](?:gpu|directml|silicon|openvino|training))?|torch|tensorrt(?:[-_]cu\d{2})?|"
    r"nvidia-[a-z-]{2,40}-cu\d{2}|nvidia-(?:cudnn|cublas|cuda-runtime|cufft|curand|cuda-nvrtc)|pycuda)"
    r"(?:\s{1,40}|==|\s{0,3}@\s{0,3}\S{0,200}?\s{0,3})v?(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?(?:[.+-]?\w{1,20})?)\b"
)
PADDED_ROW = _compile(r"^[\w.-]{1,80}\s{2,40}v?\d")  # name and version in padded columns (pip list, poetry show)
UNINSTALLED = _compile(r"Successfully uninstalled (onnxruntime(?:[-_]gpu)?)-(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)", re.I)
TYPED_ROW = _compile(r"^[\w.-]{1,80} v?\d[\w.+-]{0,40}$")  # one space between name and version: typed, not listed
DIST_LINE = _compile(r"^(?:[\s>+*-]{0,6}|[\s│├└─|`\\+-]{2,40}(?:\s|─))" + DIST_BODY, re.I)
TREE_ROW = _compile(r"^[\s│├└─|`\\+-]{0,40}[├└─│]")  # a row of a dependency tree (uv tree, pipdeptree)
# what follows a name and version in a sentence, never in a listing's row (pip list: a location; conda: a build and a
# channel; pip freeze: nothing): a colon or comma, or more words than a row has columns
SENTENCE_AFTER = _compile(r"\s{0,3}[:;,]|(?:\s{1,40}\S{1,200}){4}")
DIST_NEXT = _compile(r"\s{1,40}" + DIST_BODY, re.I)  # a wrapped listing: several rows on one line
LISTING_ROW = _compile(r"^[\w.-]{1,80}\s{1,40}v?\d{1,6}(?:[.+\w-]{0,40})$")  # `pip list`: a name and its version
DIST_INSTALLED = _compile(r"Successfully installed [^\n]{0,400}", re.I)
DIST_IN_INSTALLED = _compile(r"\b(onnxruntime(?:-gpu)?)-(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)\b", re.I)
# pip's own lines naming an installed distribution: "Found existing installation: onnxruntime 1.23.2",
# "Requirement already satisfied: onnxruntime in /usr/lib/python3/site-packages (1.16.0)"
PIP_HAS = _compile(
    r"Found existing installation: (onnxruntime(?:[-_]gpu)?) (\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)|"
    r"Requirement already satisfied: (onnxruntime(?:[-_]gpu)?)(?:[=<>~!]{1,2}[\d.*]{1,20})? in [^\n(]{0,300}"
    r"(?:\(from [^\n()]{0,200}\)\s{0,3})?\((\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)\)|"
    # pipdeptree: "  - onnxruntime [required: Any, installed: 1.16.0]"
    r"(onnxruntime(?:[-_]gpu)?) \[required: [^\]\n]{0,60}installed: (\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)|"
    # poetry: "  • Installing onnxruntime (1.16.3)", "  - Updating onnxruntime-gpu (1.15.1 -> 1.16.3)"
    r"(?:Installing|Updating|Downgrading) (onnxruntime(?:[-_]gpu)?) \((?:[\w.]{1,20} -> )?"
    r"(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)\)|"
    # pdm: "  ✔ Install onnxruntime-gpu 1.16.3 successful"
    r"Install (onnxruntime(?:[-_]gpu)?) (\d{1,4}\.\d{1,4}(?:\.\d{1,6})?) successful",
    re.I,
)
# both packages named as installed together: "installed both onnxruntime and onnxruntime-gpu", "pip install
# onnxruntime-gpu onnxruntime", "onnxruntime and onnxruntime-gpu can not co-exist"; the CPU one said installed before
_CPU_NAME = r"onnxruntime(?![-_.A-Za-z0-9])"
_GPU_NAME = r"onnxruntime[-_]gpu"
_PIN = r"(?:\s?(?:==|=|\s)v?\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)?"  # "onnxruntime==1.16.3", "onnxruntime 1.16.3"
# an application's own report of the installed packages (audio-separator: "ONNX Runtime GPU package installed with
# version: 1.18.0", "ONNX Runtime CPU package installed with version: 1.16.3")
APP_ORT_PACKAGE = _compile(r"ONNX Runtime (GPU|CPU) package installed with version:?\s{0,3}(\d+\.\d+(?:\.\d+)?)", re.I)
BOTH_PACKAGES = _compile(
    # "installed both onnxruntime and onnxruntime-gpu", "both onnxruntime and onnxruntime-gpu are installed" (not
    # "I tried both": one after the other)
    rf"(?:install\w{{0,4}}|hav(?:e|ing)|has|had|got)\s(?:\w{{1,12}}\s){{0,2}}both\b[^\n]{{0,30}}"
    rf"(?:{_CPU_NAME}[^\n]{{0,30}}{_GPU_NAME}|{_GPU_NAME}[^\n]{{0,30}}{_CPU_NAME})|"
    rf"(?:have|had|has|installed|shows?|showed|lists?|listed)\s(?:\w{{1,10}}\s){{0,2}}[`'\"]?(?:{_CPU_NAME}{_PIN}[`'\"]?\s(?:and|&|\+|,)\s[`'\"]?"
    rf"{_GPU_NAME}|{_GPU_NAME}{_PIN}[`'\"]?\s(?:and|&|\+|,)\s[`'\"]?{_CPU_NAME})|"
    rf"(?:{_CPU_NAME}[`'\"]?\s(?:and|&|,)\s[`'\"]?{_GPU_NAME}|{_GPU_NAME}[`'\"]?\s(?:and|&|,)\s[`'\"]?{_CPU_NAME})"
    rf"[`'\"]?\s(?:are|were)\s(?:both\s)?installed|"
    rf"\bboth\b[^\n]{{0,30}}(?:{_CPU_NAME}[^\n]{{0,30}}{_GPU_NAME}|{_GPU_NAME}[^\n]{{0,30}}{_CPU_NAME})[^\n]{{0,20}}"
    rf"(?:are|were|is)?\s?(?:installed|present|in (?:the|my) (?:env|venv|environment)|show(?:s|ed)? up|listed|appear)|"
    rf"(?:{_CPU_NAME}[^\n]{{0,30}}{_GPU_NAME}|{_GPU_NAME}[^\n]{{0,30}}{_CPU_NAME})[^\n]{{0,40}}(?:co-?exist|together|"
    rf"at the same time|both installed|conflict|clash|overwrit|overrid|shadow|interfer|冲突|共存|覆盖|同时)|"
    rf"{_CPU_NAME}[^\n]{{0,20}}(?:conflicts? with|overwrites|overrides|shadows|replaces|breaks|覆盖掉?|替换掉?)"
    rf"[^\n]{{0,10}}"
    rf"{_GPU_NAME}|"
    # one install command (a line of its own) naming both
    rf"^[$>#%!]{{0,2}}\s{{0,3}}(?:python3?\s{{1,3}}-m\s{{1,3}})?(?:pip3?|uv pip|uv)\s{{1,3}}(?:install|add)\s{{1,3}}"
    rf"(?:[-\w.=<>~\[\],'\"]{{1,60}}\s{{1,3}}){{0,6}}(?:{_CPU_NAME}[=<>~\d.'\"]{{0,20}}\s{{1,3}}"
    rf"(?:[-\w.=<>~\[\],'\"]{{1,60}}\s{{1,3}}){{0,6}}{_GPU_NAME}|{_GPU_NAME}[=<>~\d.'\"]{{0,20}}\s{{1,3}}"
    rf"(?:[-\w.=<>~\[\],'\"]{{1,60}}\s{{1,3}}){{0,6}}{_CPU_NAME})|"
    r"already install\w{0,3} (?:the )?onnxruntime (?:cpu|\(cpu\))|"
    # "I had onnxruntime installed before onnxruntime-gpu", "pip list shows both ...", "both the CPU and GPU versions"
    rf"{_CPU_NAME}[^\n]{{0,20}}installed (?:before|first)[^\n]{{0,30}}{_GPU_NAME}|"
    rf"(?:list|freeze|show)\w{{0,3}}[^\n]{{0,20}}\bboth\b[^\n]{{0,10}}(?:{_CPU_NAME}[^\n]{{0,30}}{_GPU_NAME}|"
    rf"{_GPU_NAME}[^\n]{{0,30}}{_CPU_NAME})|"
    r"\bboth (?:the )?CPU and (?:the )?GPU (?:versions?|packages?|builds?|flavou?rs?)(?: of onnxruntime)?|"
    # Chinese: "同时装了onnxruntime和onnxruntime-gpu", "onnxruntime和onnxruntime-gpu都装了"
    rf"(?:同时|都|一起)[^\n]{{0,6}}装[^\n]{{0,6}}(?:{_CPU_NAME}[^\n]{{0,10}}{_GPU_NAME}|{_GPU_NAME}[^\n]{{0,10}}{_CPU_NAME})|"
    rf"(?:{_CPU_NAME}[^\n]{{0,10}}{_GPU_NAME}|{_GPU_NAME}[^\n]{{0,10}}{_CPU_NAME})[^\n]{{0,10}}(?:都|同时|一起)[^\n]{{0,4}}装",
    re.I,
)
# pip fetching or installing a distribution: "Collecting onnxruntime (from rembg)", a wheel's file name, "Installing
# collected packages: a, b"; both flavours fetched in one install are both installed
PIP_COLLECTING = _compile(
    r"^\s{0,4}(?:Collecting|Requirement already satisfied:)\s(onnxruntime(?:[-_]gpu)?)(?![-_.\w])", re.I
)
WHEEL_FILE = _compile(r"(?<![\w.-])(onnxruntime(?:_gpu)?)-(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)-cp\d{2,3}-", re.I)
INSTALLING_COLLECTED = _compile(r"Installing collected packages:\s([^\n]{1,2000})", re.I)
PIP_SHOW_NAME = _compile(r"^Name:\s{0,4}(onnxruntime(?:[-_]gpu)?)\s{0,4}$", re.I)
PIP_SHOW_VERSION = _compile(r"^Version:\s{0,4}(\d{1,4}\.\d{1,4}(?:\.\d{1,6})?)", re.I)

# the user says cuDNN / the CUDA toolkit is not installed ("I installed CUDA 12.4 but not cuDNN", "没有安装cudnn")
_NOT_INSTALLED = (
    r"(?:did ?n[o']?t|have ?n[o']?t|had ?n[o']?t|has ?n[o']?t|never|not yet)\s(?:\w{1,12}\s){0,2}install\w{0,3}\s"
    r"(?:the\s|any\s)?"
)
CUDNN_ABSENT_SAID = _compile(
    rf"{_NOT_INSTALLED}cu?DNN|\bbut not (?:the )?cu?DNN\b|\bcu?DNN\s(?:is|was|isn'?t)?\s?(?:not\s)?(?:installed\s)?"
    r"(?:not installed|missing)|\bno cu?DNN\b|without (?:installing )?cu?DNN|(?:没有?|未)(?:安装|装)\s?cu?dnn|"
    r"cu?dnn\s?(?:没有?|未)(?:安装|装)",
    re.I,
)
CUDA_ABSENT_SAID = _compile(
    rf"{_NOT_INSTALLED}CUDA(?![-_\w])|\bCUDA(?: toolkit)?\s(?:is|was)?\s?not installed|"
    r"(?:do ?n[o']?t|don't|didn'?t) have (?:the |a |any )?CUDA(?: toolkit)? installed|"
    r"\bno (?:NVIDIA )?CUDA (?:toolkit|runtime|libraries|installed)|"
    r"CUDA (?:shared )?libraries are not (?:available|installed)|"
    r"without (?:installing )?(?:the )?CUDA toolkit|(?:没有?|未)(?:安装|装)\s?CUDA|CUDA\s?(?:没有?|未)(?:安装|装)",
    re.I,
)

# --- the driver and the GPU ------------------------------------------------------------------------------------
DRIVER_ABSENT = _compile(
    r"couldn't communicate with the NVIDIA driver|found no NVIDIA driver on your system|NVIDIA driver (?:is )?not "
    r"(?:installed|loaded|found)|no NVIDIA (?:GPU|driver)|without an? NVIDIA|nvidia-smi: (?:command )?not found|"
    r"(?:do not|don't|doesn't|does not) have an? (?:NVIDIA |CUDA[- ]capable )?(?:GPU|graphics card)|"
    r"(?:no|without a) (?:dedicated |discrete )?(?:NVIDIA )?GPU (?:on|in) (?:this|my|the) (?:machine|computer|laptop|"
    r"server|host)|"
    # the user runs the program on the CPU alone, in the first person ("I am using A1111 only with CPU")
    r"\bI(?: am|'m)? (?:only )?(?:using|use|run|running)\b[^\n.,]{0,40}? only (?:with|on) (?:the |a |my )?CPU\b|"
    # nvidia-smi cannot run, NVML or the kernel driver not loaded
    r"(?:unable to|can'?t|cannot|could not|couldn'?t|not able to) (?:use|run|find|execute|call|start) "
    r"[`'\"]?nvidia-smi|"
    r"nvml error: driver not loaded|NVML: Driver Not Loaded|kernel driver does not appear to be running|"
    r"nvidia-smi:? No such file or directory|could not load NVML library|'nvidia-smi' is not recognized|"
    r"\bCPU[- ]only (?:machine|computer|server|host|instance|laptop|VM|box|node)s?\b|"
    r"/proc/driver/nvidia/version does not exist",
    re.I,
)
# the driver said too old, or updating it fixed it (advice to update a driver is no evidence: anyone gives it)
DRIVER_OLD = _compile(
    r"driver(?: version)? (?:is |was )?(?:too (?:low|old)|insufficient|outdated)|"
    r"(?:updat|upgrad)\w{1,4} (?:my |the )?(?:nvidia |gpu )?drivers?\b[^\n]{0,40}(?:fix|solv|resolv|work)",
    re.I,
)
DRIVER_MISMATCH = _compile(
    r"Driver/library version mismatch|unsupported display driver / cuda driver combination",
    re.I,
)
# the GPU is seen inside the container: nvidia-smi run there, or the user says it works there
GPU_IN_CONTAINER = _compile(
    r"docker (?:run|exec)[^\n]{0,200}nvidia-smi|"
    r"nvidia-smi[^\n]{0,80}(?:works|runs|shows|is fine|is ok|succeeds)[^\n]{0,40}(?:inside|in|within) (?:the |my |a )?"
    r"(?:docker|container)|(?:inside|in|within) (?:the |my |a )?(?:docker|container)[^\n]{0,60}nvidia-smi"
    r"[^\n]{0,40}(?:works|runs|shows|is fine|fine|ok\b|succeeds|lists|sees)|"
    r"root@[0-9a-f]{12}:[^\n]{0,60}nvidia-smi",
    re.I,
)
CONTAINER = _compile(
    r"\b(docker|podman|kubernetes|k8s|kubectl|container|nvidia-container|devcontainer|\.dockerenv|singularity|"
    r"apptainer|enroot|nvidia/cuda:|nvcr\.io|compose\.ya?ml|unraid|truenas|容器)|hostname=[0-9a-f]{12}\b|"
    r"\broot@[0-9a-f]{12}:",
    re.I,
)
# the container started without the GPU, said so ("ran it without --gpus", "adding --gpus all fixed it")
GPU_NOT_PASSED = _compile(
    r"(?:without|forgot|missing|no|didn'?t (?:add|pass|use|set))\s(?:the\s|to (?:add|pass|use)\s)?"
    r"(?:--gpus|--runtime[= ]nvidia|runtime: ?nvidia|nvidia runtime|gpu (?:flag|option|reservation|access))|"
    r"(?:add|pass|us|set)\w{0,3}\s(?:the\s)?(?:--gpus|--runtime[= ]nvidia|runtime: ?nvidia)[^\n]{0,40}"
    r"(?:fix|solv|resolv|works? now|did the trick)|"
    # NVIDIA's container images, started without GPU access: "WARNING: The NVIDIA Driver was not detected.  GPU
    # functionality will not be available."
    r"NVIDIA Driver was not detected\.\s{0,3}GPU functionality will not be available",
    re.I,
)
# rebooting (after a driver update) fixed it: the driver's kernel module and libraries differed until then
_REBOOT = r"(?:reboot\w{0,3}|restart\w{0,3}\s(?:the\s|my\s)?(?:machine|computer|system|server|pc|host|laptop|box))"
REBOOT_FIXED = _compile(  # (restarting a pod, a container or an app is no reboot)
    rf"{_REBOOT}[^\n]{{0,30}}(?:fix|solv|resolv|works? (?:now|again)|did the trick)|"
    rf"(?:fix|solv|resolv)\w{{0,4}}[^\n]{{0,20}}\b(?:by|after)\s(?:a\s)?{_REBOOT}",
    re.I,
)
# torch's own check that the GPU's architecture is not in its build
TORCH_ARCH = _compile(r"with CUDA capability sm_\d{2,3}\w? is not compatible with the current PyTorch", re.I)
CONTAINER_GPU = _compile(
    r"--gpus|runtime:\s{0,3}nvidia|--runtime=nvidia|deploy:[^\n]{0,20}devices|"
    r"NVIDIA_VISIBLE_DEVICES|capabilities:\s{0,3}\[?\s{0,3}gpu|nvidia\.com/gpu|(?:singularity|apptainer)\s[^\n]{0,40}--nv\b",
    re.I,
)
# torch sees no CUDA device ("torch.cuda.is_available()" answered False)
TORCH_NO_CUDA = _compile(
    r"torch\.cuda\.is_available\(\)[^\n]{0,12}(?:False|returns? false)|CUDA available: False", re.I
)
WSL = _compile(r"\bWSL2?\b|microsoft-standard|/usr/lib/wsl", re.I)
# the variable and its value: empty only when set so ("", '', nothing before the line's end), not "$GPU"
VISIBLE = _compile(
    r"\b((?:CUDA|NVIDIA)_VISIBLE_DEVICES)[\"']?\]?\s{0,3}[=:]\s{0,3}[\"']?([\w,-]{0,40})(?=[\"'\s,;)]|$)", re.I
)
NVIDIA_GPU = _compile(
    r"\b(?:NVIDIA\s|GeForce\s|Quadro\s|Tesla\s){0,3}(?:(?:RTX|GTX|GT|MX|TITAN)\s?(?:PRO\s)?[A-Z]?\d{2,4}"
    r"(?:\s?(?:Ti|SUPER|Ada))?|TITAN\s(?:RTX|V|Xp?)|"
    r"(?<![\w.])(?:[ABHKLMPTV]\d{1,3}[GS]?|GB200|GH200)(?=[\s,)\-]|$))",
    re.I,
)
OTHER_GPU = _compile(
    r"\b(?:AMD\s?)?Radeon\b[^\n,;)]{0,30}|\bRX\s?\d{3,4}(?:\s?XTX?)?\b|\bIntel\(R\)\s(?:UHD|Iris|HD)[^\n,;)]{0,30}|"
    r"\bIntel\s(?:UHD|Iris|HD|Arc)\b[^\n,;)]{0,20}|\bAMD (?:GPU|graphics|cuda)\b|\bROCm\b|"
    r"\b(?:integrated\s)?Intel\s(?:integrated\s)?GPU\b|\bIris\s?Xe\b|"
    r"\[[+xX✓]\]\s{0,2}(?:AMD|Intel)\b",
    re.I,
)
GPU_CONTEXT = _compile(r"nvidia|tesla|gpu|cuda|显卡|device", re.I)

# --- platform --------------------------------------------------------------------------------------------------
WINDOWS = _compile(
    r"\.dll\b|\b[A-Z]:\\|LoadLibrary|\bWindows\b|WinError|\.exe\b|\\AppData\\|win_amd64|win32|\bwin\s?(?:7|8|10|11)\b",
    re.I,
)
LINUX = _compile(r"\.so\b|\.so\.\d|\bLinux\b|/usr/|/home/|/opt/|\bUbuntu\b|\bDebian\b|manylinux|linux_x86_64", re.I)
# (a Windows path written with slashes, C:/Users/ or WSL's /mnt/c/Users/, is no macOS home)
MACOS = _compile(
    r"\bmacOS\b|\bdarwin\b|macosx_|(?<![A-Za-z]:)(?<!/[A-Za-z])/Users/\w|/Volumes/|\bApple (?:M\d|Silicon)\b|"
    r"\bMac ?OS\b",
    re.I,
)
ARM = _compile(r"\b(aarch64|arm64|ARM64|jetson|tegra|l4t|Orin|Xavier)\b", re.I)
JETSON = _compile(r"\b(jetson|tegra|l4t|jetpack)\b", re.I)
PYTHON = _compile(
    r"\bPython\s?(3\.\d{1,2})(?:\.\d{1,3})?\b|\bpython(3\.\d{1,2})\b|\bcp3(\d{1,2})\b|\\Python3(\d{1,2})\\", re.I
)
PYTHON_CALLER = _compile(
    r"site-packages|Traceback \(most recent call last\)|\bpip3? (?:install|list|show|freeze)|import onnxruntime|"
    r"\.py\b|\bpython3?(?:\.exe)?\b|onnxruntime_pybind11_state",
    re.I,
)
PYTHON_32BIT = _compile(r"\b32[ -]?bit\b|\bwin32\b(?!\s*(?:api|error))|\bx86\b(?![_-]64)", re.I)

# --- packages --------------------------------------------------------------------------------------------------
NOT_INSTALLED = _compile(
    r"(?<![-\w])onnxruntime(?![-_.\w])\s(?:package\s)?(?:is|was)\s(?:\w{1,10}\s)?not\sinstalled|"
    rf"No module named {Q}onnxruntime{Q}|No module named {Q}onnxruntime\.capi|No module named onnxruntime$|"
    rf"DistributionNotFound: The {Q}onnxruntime|PackageNotFoundError: {Q}?onnxruntime|"
    r"No matching distribution found for onnxruntime\b(?!-gpu)(?!_gpu)|"
    rf"The {Q}?onnxruntime(?:[-_]gpu)?{Q}? distribution was not found|"
    # .NET: the managed API without a native runtime package: the onnxruntime.dll found (Windows' own, in System32) is
    # not ONNX Runtime's, it lacks the very first entry point
    rf"entry point named {Q}OrtGetApiBase{Q}|EntryPointNotFoundException{Q}? in Microsoft\.ML\.OnnxRuntime\.dll|"
    # Triton Inference Server without its onnxruntime backend
    rf"unable to find backend library for backend {Q}?onnxruntime|"
    # an application's own check, in Chinese: "ONNX 运行环境未安装" (the ONNX runtime environment is not installed)
    r"ONNX\s?(?:Runtime\s?)?运行(?:环境|时)\s?未安装",
    re.I,
)
BROKEN_PACKAGE = _compile(
    # an installer that finds the package without its files: onnxruntime-node's "Failed to find runtimes/.../
    # libonnxruntime_providers_cuda.so in NuGet package"
    r"Failed to find [^\n]{0,160}onnxruntime[^\n]{0,80} in (?:the\s)?(?:NuGet\s)?package|"
    rf"module {Q}onnxruntime{Q} has no attribute {Q}(?:InferenceSession|SessionOptions|"
    rf"GraphOptimizationLevel|get_available_providers|get_device|set_default_logger_severity|capi){Q}|"
    rf"cannot import name {Q}\w{{1,40}}{Q} from {Q}onnxruntime{Q} \(unknown location\)|"
    r"onnxruntime\.capi\.onnxruntime_pybind11_state[^\n]{0,40}No module named",
    re.I,
)
NO_WHEEL = _compile(
    r"No matching distribution found for (?:onnxruntime[-_]gpu|onnxruntime)|Could not find a version that "
    r"satisfies the requirement onnxruntime|"
    r"ha(?:s|ve) no wheels with a(?: matching (?:Python ABI|platform|Python implementation|Python version)|\s{0,3}$)|"
    # conda / mamba / poetry finding no onnxruntime package for the platform or Python
    r"nothing provides (?:requested )?onnxruntime|Unable to find installation candidates for onnxruntime|"
    r"is not a supported wheel on this platform|no wheels? (?:are |is )?(?:available|published) for|"
    # uv: "Distribution `onnxruntime-gpu==1.20.2 @ registry+...` can't be installed because it doesn't have a
    # source distribution or wheel for the current platform"
    r"doesn'?t have a source distribution or wheel for the current platform|"
    r"only has wheels for the following platforms|"
    # said: "onnxruntime-gpu publishes no aarch64 wheels", "no aarch64 wheel" beside the GPU package
    r"onnxruntime[-_]gpu[^\n]{0,80}\bno (?:linux[- ])?(?:aarch64|arm64)(?: GPU)? wheels?|"
    r"publishes no (?:linux[- ])?(?:aarch64|arm64) wheels?",
    re.I,
)
# a row of conda's PackagesNotFoundError list naming an onnxruntime package
CONDA_MISSING_ROW = _compile(
    r"(?:^|\s)(?:-\s{1,3})?onnxruntime(?:[-_]gpu)?(?:\s{0,3}[=<>][\w.*=<>,]{0,40})?\s{0,4}$", re.I
)
# pip's failure in the user's words, on a line about pip or the package
NO_WHEEL_SAID = _compile(
    r"(?:pip|install|onnxruntime)[^\n]{0,80}(?:doesn'?t|does not|can'?t|cannot|couldn'?t|won'?t)(?: ever)? find "
    r"(?:a |any )?(?:version|distribution|matching)",
    re.I,
)
# the install of onnxruntime(-gpu) itself failing, said in words: "it's not installing", "can't install onnxruntime-gpu"
INSTALL_FAILED_SAID = _compile(
    r"(?:it'?s|is|it|does|did)\s(?:not|n't)\s(?:get(?:ting)?\s)?install(?:ing|ed)?\b|"
    r"(?:can'?t|cannot|could not|couldn'?t|unable to|fail(?:s|ed)? to|won'?t)\s(?:get\s|be\s)?install(?:ed)?\b|"
    r"install(?:ation)?\s(?:fails|failed|doesn'?t work|does not work|errors? out)",
    re.I,
)
NO_TENSORRT = _compile(
    rf"No module named {Q}tensorrt|TensorRT (?:is )?not (?:installed|found)|install (?:the )?TensorRT librar",
    re.I,
)

# --- runtime symptoms ------------------------------------------------------------------------------------------
CUDA_ERROR_NUMBER = _compile(
    r"CUDA (?:failure|error)\s{0,3}(?:code\s{0,3})?[:=]?\s{0,3}(\d{1,4})\b|cudaError\w{0,40}\s{0,3}\(?(\d{1,4})\)?|"
    r"error\s{0,2}==\s{0,2}cudaSuccess \((\d{1,4}) vs\. 0\)|error=(\d{1,4})\s{0,2}:",
    re.I,
)
CUDA_ERROR_NAME = _compile(r"\b(cudaError[A-Z]\w{1,40})")
# a CUDA call failing (its error not named), and the process was forked: CUDA initialised before fork() is unusable
CUDA_CALL_FAILED = _compile(
    r"CUDA error executing cuda\w{2,40}|cudaErrorInitializationError|initialization error", re.I
)
FORK = _compile(r"\bmultiprocessing\b|\bos\.fork\(|\bfork\(\)|\bProcess\(target=|start_method|mp\.Pool\(", re.I)
# a CUDA provider kernel failed while running a node (the provider loaded, one of its kernels failed)
NODE_FAILED = _compile(
    r"(?:Non-zero status code returned while running|while running) \w{1,60} node[^\n]{0,300}"
    r"(?:CUDA (?:failure|error)|CUDNN(?:_FE)? (?:failure|error)|CUDNN_STATUS|CUBLAS (?:failure|error)|CUBLAS_STATUS|"
    r"cuda_call)",
    re.I,
)
# differences stated at the fourth decimal place or later, or as 1e-5 and smaller: float rounding, not a wrong result
TINY_DIFFERENCE = _compile(
    r"(?:to|at|from|in) (?:about |around |the )?(?:[4-9]|four|five|six|seven|eight|fifth|sixth|seventh|eighth)(?:th)? "
    r"(?:decimal|digit|significant)|"
    # (a tolerance given, "atol=1e-05", is no difference seen)
    r"(?:decimal|digit)s? (?:place )?(?:[4-9]|four|five|six)\b|(?<!tol=)(?<!tol )\b1e-0?(?:[5-9]|1\d)\b|\b0\.0000\d",
    re.I,
)
# numpy.testing.assert_allclose failing ("Not equal to tolerance", "Mismatched elements: 312 / 1000"), and its call
# comparing a GPU (CUDA) session's outputs with the CPU's
ALLCLOSE_FAILED = _compile(r"Not equal to tolerance|Mismatched elements: [1-9]", re.I)
ALLCLOSE_CALL = _compile(r"(?:assert_allclose|allclose)\([^\n]{0,200}(?:gpu|cuda|trt)", re.I)
# the user (or the thread) says the libraries are not on the loader's path
NOT_ON_PATH_SAID = _compile(
    r"(?:cuda|cudnn|cublas|nvidia|libcu\w{0,20}|\.dll|\.so)[^\n]{0,60}(?:missing from|not (?:in|on|added to|"
    r"included in)|isn'?t (?:in|on)|absent from|lack of)[^\n]{0,20}(?:LD_LIBRARY_PATH|\bPATH\b)|"
    r"(?:lack of|missing|add(?:ing)?)\s(?:the\s)?(?:cuda|cudnn)[^\n]{0,40}(?:on|in|to) (?:the )?"
    r"(?:LD_LIBRARY_PATH|\bPATH\b)|"
    r"(?:cuda|cudnn)[^\n]{0,40}(?:没有|未)[^\n]{0,12}(?:加入|添加|加到)[^\n]{0,6}PATH",
    re.I,
)
# the device asked for does not exist for this process (no GPU visible: a container without one, CUDA_VISIBLE_DEVICES)
DEVICE_ID_INVALID = _compile(
    r"Failed to parse provider option \"?device_id|invalid device ordinal|cudaErrorInvalidDevice\b|"
    r"Invalid device id|device_id[^\n]{0,30}(?:out of range|is invalid|not valid)",
    re.I,
)
# a library of the same name but another build was found first: the right one is not first on the loader's path
VERSION_NOT_DEFINED = _compile(
    rf"version {Q}?[\w.+-]{{1,80}}{Q}? not defined in file (?<![\w.+-])({LIB})|"
    # glibc: a symbol of the version the provider was linked against is absent from the copy found first
    rf"undefined symbol: \w{{1,200}}, version (?<![\w.+-])({LIB})",
    re.I,
)
# a library said to be present: "libnvinfer.so.6 is located at TensorRT-*/lib"
LIBRARY_PRESENT = _compile(
    rf"(?<![\w.+-])({LIB}){Q}?\s(?:is|was|are)\s(?:\w{{1,10}}\s)?(?:located|present|installed|there)\s(?:at|in|under)\b",
    re.I,
)
# a hypothetical error ("if it is showing Could not load ... 'libcudart.so.10.0', you need CUDA 10.0"): not this log's
HYPOTHETICAL = _compile(r"\bif (?:it|you|the \w{1,20})(?:'re| are| is)? (?:\w{1,12} )?(?:show|see|get|say|print)", re.I)
# a question or a guess naming a library: "Maybe zlibwapi.dll is missing?"; speculation: a guess, or any question
GUESS = _compile(r"\b(?:maybe|perhaps|possibly|might|could it be|is it)\b[^\n]{0,80}\?", re.I)
SPECULATION = _compile(GUESS.pattern + r"|\?\s{0,3}$", re.I)
# ultralytics' AutoUpdate failing: nothing was installed
AUTOUPDATE_FAILED = _compile(
    r"Retry \d/\d failed|AutoUpdate[^\n]{0,40}failed|returned non-zero exit status|pip: command not found", re.I
)
# a CUDA, cuBLAS or cuDNN call of ONNX Runtime's CUDA provider failed (any status; the rules name the known ones)
CUDA_CALL_ERROR = _compile(
    r"cuda_call\.cc|CudaCall|(?:CUDA|CUBLAS|CUDNN(?:_FE)?|CUFFT|CURAND) failure \d|(?:CUDNN|CUBLAS) error executing",
    re.I,
)
# the DirectML provider failed: its source path or name on a line with the HRESULT it raised (887A0004 feature level
# not supported, 887A0005/887A0006 device removed/hung, 80070057 invalid parameter, 8007000E out of memory), or its
# own words
DML_FAILED = _compile(
    r"(?:providers[\\/]dml[\\/]|DmlExecutionProvider|DmlFusedNode|dml_provider_factory)[^\n]{0,300}"
    r"\b(?:887A000[1-7]|8007000E|80070057|80004005)\b|DirectML execution failed|D3D12CreateDevice[^\n]{0,80}fail",
    re.I,
)
# CUDA_FORCE_PTX_JIT set (not 0): the driver ignores compiled kernels and JIT-compiles PTX only
FORCE_PTX_JIT = _compile(r"CUDA_FORCE_PTX_JIT\s{0,3}=\s{0,3}[\"']?[1-9]", re.I)
# a session could not be initialised (its providers' set-up failed)
INIT_FAILED = _compile(r"Exception during initialization|cudnnCreate|cublasCreate", re.I)
CONTAINER_TOOLKIT = _compile(r"nvidia-container-cli|nvidia-container-runtime|OCI runtime create failed", re.I)
# docker has no GPU runtime (the NVIDIA container toolkit is not installed or not configured on the host)
NO_GPU_RUNTIME = _compile(
    r"could not select device driver [\"']{0,2}[^\n]{0,20} with capabilities: \[\[gpu\]\]|"
    r"unknown or invalid runtime name: nvidia",
    re.I,
)
# NVML inside a container that lost (or never had) its device access: "Failed to initialize NVML: Unknown Error"
NVML_UNKNOWN = _compile(r"Failed to initialize NVML: Unknown Error", re.I)
CUBLAS_ERROR = _compile(r"CUBLAS (?:failure|error)\s{0,3}(\d{1,3})\b|\b(CUBLAS_STATUS_[A-Z_]{2,40})", re.I)
OOM = _compile(
    r"out of memory|CUDA_ERROR_OUT_OF_MEMORY|Failed to allocate memory for requested buffer|"
    r"CUDNN_STATUS_ALLOC_FAILED|BFCArena::AllocateRawInternal|显存不足",
    re.I,
)
CONTEXT = _compile(r"invalid resource handle|pycuda\.autoinit|CUDA_ERROR_INVALID_CONTEXT|invalid device context", re.I)
# cuDNN failing at its start, not for want of GPU memory (CUDNN_STATUS_ALLOC_FAILED on the line: out of memory)
CUDNN_STATUS = _compile(
    r"^(?![^\n]*ALLOC_FAILED)[^\n]*?(?:CUDNN_STATUS_NOT_INITIALIZED|CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED|"
    r"CUDNN_STATUS_VERSION_MISMATCH|cudnnCreate\(|"
    r"Cannot load symbol cudnn\w)",  # cuDNN's dispatcher: the sub-library with that symbol is missing
    re.I,
)
NODES_ON_CPU = _compile(
    r"Some nodes were not assigned to the preferred execution providers|"
    r"All nodes have been placed on \[CPUExecutionProvider\]|Node\(s\) placed on \[CPUExecutionProvider\]|"
    # the CUDA provider has no kernel for a node, or ONNX Runtime places shape nodes on the CPU
    r"CUDA kernel not found in registries for Op type|Force fallback to CPU execution for node",
    re.I,
)
MEMCPY = _compile(r"Memcpy nodes are added to the graph", re.I)
SLOWER = _compile(
    r"(?:GPU|cuda)[^\n]{0,40}(?:slower|much slower|more slowly|慢|耗时更长|速度远小于|远慢于)|"
    # slower where the run was on the GPU ("twice slower with GPU"; "slower than GPU" is the CPU's run: not this)
    r"(?:slower|慢)[^\n]{0,20}(?:on|with|using|in|在)\s{0,3}(?:the\s)?(?:GPU|cuda)\b|"
    # faster where the run was on the CPU ("it ran faster in CPU mode")
    r"\bfaster (?:in|on|with|using) (?:the\s)?CPU\b(?!\s(?:than|vs))|"
    r"CPU[^\n]{0,40}(?:faster than|快于)[^\n]{0,20}(?:GPU|cuda)|CPU[^\n]{0,6}比\s?(?:GPU|cuda)[^\n]{0,6}快|"
    r"(?:VRAM|GPU|cuda)[^\n]{0,80}(?:extremely|very|really|much|too|so|super) slow|"
    r"(?:GPU|cuda)[^\n]{0,60}(?:takes|took|taking) (?:forever|ages|so long)|"
    r"(?:GPU|cuda)\w{0,20}\s(?:\w{1,12}\s){0,2}(?:is|are|runs?|running)\s(?:\w{1,10}\s)?slow\b|"
    # the GPU run compared with the CPU in words: "a little slower than CPU", "GPU or CPU the same", "equally slow"
    r"\b(?:slower|not faster) than (?:the\s|on\s|on the\s|running on\s)?CPU\b|"
    r"(?:GPU|cuda)\s(?:or|and|vs\.?|versus)\s(?:the\s)?CPU[^\n]{0,30}\b(?:the\s)?same\b|"
    r"(?:time|speed|performance)[^\n]{0,40}\b(?:both|either)\b[^\n]{0,30}(?:the\s)?same\b|"
    r"(?:GPU|cuda)[^\n]{0,40}(?:no|not any|without (?:any )?)\s?(?:speed-?up|faster)|"
    r"(?:GPU|cuda)[^\n]{0,30}(?:is|was|isn'?t|wasn'?t|not)\s(?:\w{1,10}\s)?(?:any\s)?faster than[^\n]{0,12}CPU|"
    r"(?:GPU|cuda)[^\n]{0,40}same (?:speed|time) as[^\n]{0,12}CPU|"
    r"(?:speed|throughput|fps|performance)[^\n]{0,30}(?:GPU|cuda)[^\n]{0,30}(?:lower|worse|less) than[^\n]{0,20}CPU|"
    r"(?:GPU|cuda)[^\n]{0,40}(?:lower|worse|less) (?:speed|performance|throughput|fps)[^\n]{0,20}CPU|"
    r"(?:GPU|cuda)[^\n]{0,40}(?:performance|speed)[^\n]{0,20}(?:worse|lower) than[^\n]{0,30}CPU|"
    r"CPU (?:outperforms|beats|is better than) (?:the )?(?:GPU|cuda)|"
    r"(?:GPU|cuda)[^\n]{0,40}takes (?:\d{1,3}(?:\.\d)?x |much |a lot |far |way )?(?:more time|longer)[^\n]{0,20}CPU|"
    r"(?:GPU|cuda)[^\n]{0,40}\d{1,3}(?:\.\d)?x (?:longer|slower)|"
    r"比\s?cpu[^\n]{0,6}慢|"
    r"GPU[^\n]{0,40}(?:time|时间|耗时)[^\n]{0,30}(?:more than|exceed|exceeding|longer than|greater than|大于|超过)"
    r"[^\n]{0,20}CPU|onnxruntime/issues/13198|issue#13198",
    re.I,
)
FASTER_GPU = _compile(  # "the GPU is 3x faster than the CPU" (not "not faster than", not "I expected GPU faster")
    r"(?:^|(?<!expect)(?<!expectation)(?<!expected)(?<!thought)(?<!should)(?<!hoped)(?<!assumed)(?<!would)"
    r"(?<!suppose)(?<!supposed)(?<!believe)(?<!assume)(?<!hope)(?<!\bthat)(?<!\bif)(?<!\bas)\s)"
    r"(?:the\s)?GPU(?:(?!\bnot\b|n't|\bno\b|\bshould\b|\bwould\b|\bsupposed\b)[^\n]){0,40}faster than[^\n]{0,12}"
    r"CPU(?![^\n]{0,30}\bbut\b)|GPU[^\n]{0,20}比\s?CPU[^\n]{0,6}快",
    re.I,
)
# a rate where a time would be: "GPU: 12 fps", "CPU 3.5 it/s" (higher is faster)
RATE = _compile(
    r"\b(GPU|CPU|cuda)(?:ExecutionProvider)?\b[^\n\d]{0,40}?(\d{1,6}(?:\.\d{1,6})?)\s{0,2}(fps|it/s|img/s|images/s|帧)",
    re.I,
)
TIMING = _compile(
    r"\b(onnxruntime(?:[-_]gpu)?|GPU|CPU|cuda)(?:ExecutionProvider)?\b[^\n\d]{0,40}?(\d{1,6}(?:\.\d{1,20})?)\s{0,2}"
    r"(ms|毫秒|s|sec|secs|seconds?|秒)(?![\w])",
    re.I,
)
BARE_TIMING = _compile(
    r"(?:time|耗时|latency|took|elapsed)[^\n\d]{0,30}?(?:0{1,2}:0{2}:)?(\d{1,6}(?:\.\d{1,20})?)\s{0,2}(ms|毫秒|s|sec|秒)?"
    r"(?![\w.])",
    re.I,
)
TIMING_HEADER = _compile(r"^[#*\s]{0,6}(GPU|CPU|cuda)\b[^\d\n]{0,30}$", re.I)  # "GPU Test result", "## CPU"
TABLE_DEVICE = _compile(
    r"\b(CPU|GPU|CUDA|TensorRT|TRT)(?:ExecutionProvider)?\b", re.I
)  # a table column or row named by its device
TABLE_TIME = _compile(r"time|latency|耗时|时间|\bms\b|\(s\)|秒|sec", re.I)
TABLE_NUMBER = _compile(r"^\s{0,4}(\d{1,7}(?:\.\d{1,12})?)\s{0,2}(ms|毫秒|s|sec|秒)?\s{0,4}$", re.I)
OTHER_FRAMEWORK = _compile(r"torch|tensorflow|paddle", re.I)  # its timings are not ONNX Runtime's
DIFFER = _compile(
    r"(?:results?|outputs?|inference)[^\n]{0,60}(?:differ|different|not (?:the )?same|inconsistent|not stable|"
    r"unstable|mismatch|wrong)|(?:differ|different|inconsistent|wrong)[^\n]{0,30}(?:results?|outputs?)|"
    r"(?:relative|absolute|max(?:imum)?) (?:diff|difference|error)|结果(?:不一致|不同|差异|有差别|不稳定|错误)|"
    r"(?:精度|误差)[^\n]{0,10}(?:大|不一致)|not equal to tolerance|"
    r"(?:produce|give|return|output|get)s?\s(?:\w{1,12}\s)?different\s(?:values?|results?|outputs?|labels?|predictions?)|"
    r"accuracy\s(?:\w{1,12}\s)?drops?|结果[^\n]{0,4}(?:错误|不对|不正确)|"
    # one provider's outputs said to be bad: "produces bad output in CPUExecutionProvider", "garbage results on CUDA"
    r"(?:bad|incorrect|garbage|corrupt(?:ed)?|nonsense|glitched)\s(?:\w{1,12}\s)?(?:results?|outputs?|images?|predictions?)\s"
    r"(?:\w{1,12}\s){0,3}(?:on|in|with)\s(?:the\s)?(?:CPU|GPU|CUDA|\w{2,20}ExecutionProvider)",
    re.I,
)
