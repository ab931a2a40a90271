# lit configuration for the ave test suite (MLIR style: every test carries its RUN lines).
import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "ave"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".ave", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ave_obj_root, "test")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]

tools = [
    os.path.join(config.ave_obj_root, "tools"),
    os.path.join(config.ave_obj_root, "test", "unit"),
    os.path.join(config.ave_obj_root, "test", "capi"),
    config.llvm_tools_dir,
]
config.environment["PATH"] = os.pathsep.join(tools + [config.environment.get("PATH", "")])
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0:quarantine_size_mb=8"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
# The TSan build (scripts/check.sh): any report fails the test; tsan.supp says what is suppressed.
config.environment["TSAN_OPTIONS"] = "halt_on_error=1:suppressions=" + os.path.join(
    config.ave_src_root, "test", "tsan.supp")
config.environment["AVE_CACHE_DIR"] = os.path.join(config.ave_obj_root, "test", "cache")

config.substitutions.append(("%examples", os.path.join(config.ave_src_root, "examples")))
config.substitutions.append(("%inputs", os.path.join(config.ave_src_root, "test", "Inputs")))
config.substitutions.append(("%src", config.ave_src_root))
config.substitutions.append(("%obj", config.ave_obj_root))

# Optional capabilities: tests say REQUIRES: ptxas / cuda-gpu / hip-gpu and are UNSUPPORTED
# where they are missing, never passed silently.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
if shutil.which("ld.lld-19") or os.path.exists(os.path.join(config.llvm_tools_dir, "ld.lld")):
    config.available_features.add("lld")
for lib in ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"):
    if os.path.exists(lib) and os.path.exists("/dev/nvidiactl"):
        config.available_features.add("cuda-gpu")
# The CUDA toolkit's stub libcuda (link-time only): opening a device with it must say so.
for lib in ("/usr/local/cuda/lib64/stubs/libcuda.so",):
    if os.path.exists(lib):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stub", lib))
if os.path.exists("/dev/kfd"):
    config.available_features.add("hip-gpu")
# The AMDGPU backend links HSACOs in-process (built with liblld-19-dev): --assembler=lld works.
if getattr(config, "inproc_lld", False):
    config.available_features.add("inproc-lld")
if config.sanitized:
    config.available_features.add("sanitized")
# "quick": a build whose tests repeat what the release build's cover, for another purpose (the
# sanitizers; the GCC build, which shows that ave does not depend on the compiler that built it).
# There the generated-kernel runs draw fewer cases and the longest simulations are left to the
# release build, so that the whole suite keeps to its time.
if config.sanitized or getattr(config, "c_compiler_id", "") == "GNU":
    config.available_features.add("quick")
if os.path.exists(os.path.join(config.ave_obj_root, "test", "fuzz", "ave-fuzz")):
    config.available_features.add("fuzzer")

# The Python package's tests need a Python with pytest and NumPy; lit's own may lack them (a
# pyenv shim in front of Debian's python3, say), so try it and then the system's.
for py in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
    if py and os.path.exists(py) and subprocess.run(
            [py, "-c", "import pytest, numpy"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add("python-pytest")
        config.substitutions.append(("%python", py))
        break
