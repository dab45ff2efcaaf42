"""Read the real host into HostFacts: nvml.py (driver, GPUs), system.py (OS, container, WSL), target.py (the
target interpreter: which one, and what it holds, read by one program run in it; packages.py turns its answer
into facts), libraries.py (CUDA libraries)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner import __version__
from provisioner.facts import HostFacts

if TYPE_CHECKING:
    from provisioner.probe.packages import PackagesReport


def detect_host(
    python: str | None = None,
    timeout: float = 20.0,
    root: Path = Path("/"),
    env: dict[str, str] | None = None,
    nvml: Any = None,
    report: PackagesReport | None = None,
) -> HostFacts:
    """Everything ortprov knows about this host and the target interpreter (`--python`, else the active env).

    Raises BadInput for a target that is not a working Python (probe.target); every other problem becomes a
    probe_errors line. `report`: the target already read (apply reads it once, under its lock): it is not
    probed again. `root`, `env` and `nvml` (a stand-in for the pynvml module) exist for tests.
    """
    from provisioner.probe import libraries, system, target
    from provisioner.probe import nvml as nvml_probe

    env = dict(os.environ) if env is None else env
    probe = target.start(python, timeout, env) if report is None else None  # runs while the others read the host
    platform_info = system.read_platform(root)
    environment = system.read_environment(root, env)
    windows = platform_info.os == "windows"
    driver = nvml_probe.read_driver(nvml=nvml, proc_root=root, env=env, use_procfs=platform_info.os == "linux")
    ldconfig_text = libraries.read_ldconfig() if platform_info.os == "linux" else ""
    if probe is not None:
        report = probe.result()
    assert report is not None
    conda_prefix = report.python.prefix if report.python and report.python.is_conda else None
    places = libraries.search_places(
        windows=windows,
        wheels=report.nvidia_wheels,
        torch=report.torch,
        torch_requires=report.torch_requires,
        conda_prefix=conda_prefix,
        env=env,
        root=root,
        python_dir=os.path.dirname(report.python.executable) if windows and report.python else None,
    )
    owners = libraries.read_conda_owners(conda_prefix, windows) if conda_prefix else {}
    ldconfig = libraries.parse_ldconfig(ldconfig_text, platform_info.arch)
    found = libraries.find_libraries(places, ldconfig, windows, owners)
    return HostFacts(
        platform=platform_info,
        driver=driver.driver,
        python=report.python,
        gpus=driver.gpus,
        environment=environment,
        onnxruntime=report.onnxruntime,
        torch=report.torch,
        nvidia_wheels=report.nvidia_wheels,
        libraries=found,
        probe_errors=driver.errors + report.errors,
        captured_by=f"ortprov {__version__}",
    )
