"""Builds libkiln_torch.so (Kiln's compiler and runtime as torch ops) with CMake against the installed torch and puts
it into the `kiln` package. Metadata: pyproject.toml. Environment:
  KILN_BUILD_DIR   the CMake build folder (default build-python); one already configured is only built, so that a
                   build configured by hand (scripts/device/build.sh) is reused as it is
  KILN_CMAKE_ARGS  extra arguments for the configure step (e.g. -DKILN_WITH_CUDA=ON)
  KILN_JOBS        parallel build jobs (default: the CPU count)
"""

import os
import shlex
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def build_library() -> str:
    build = os.path.abspath(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build-python")))
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        import torch  # the torch this package will run with: its libtorch is what the library links
        configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DKILN_BUILD_TESTS=OFF",
                     "-DKILN_BUILD_BENCH=OFF", "-DKILN_PYTHON=OFF"]
        prefix = torch.utils.cmake_prefix_path
        if os.path.isdir(prefix):  # Debian's python3-torch has none: its libtorch-dev is found system-wide
            configure.append("-DCMAKE_PREFIX_PATH=" + prefix)
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("KILN_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
    jobs = os.environ.get("KILN_JOBS", str(os.cpu_count() or 2))
    subprocess.check_call(["cmake", "--build", build, "--target", "kiln_torch", "--parallel", jobs])
    return os.path.join(build, "tools", "torch_library", "libkiln_torch.so")


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        self.copy_file(build_library(), os.path.join(self.build_lib, "kiln", "libkiln_torch.so"))


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tagged for this platform and Python."""

    def has_ext_modules(self):
        return True


# setuptools' own build folder must not be build/, which is CMake's.
setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join("build-python", "setuptools")},
               "egg_info": {"egg_base": "build-python"}})
