# Sourced (not run) by the device scripts, from the repository root on the GPU machine: finds cuDNN in the
# nvidia-cudnn Python wheel (the machine has no system cuDNN), puts its lib folder on LD_LIBRARY_PATH and sets
# cudnn_cmake_args (-DCUDNN_ROOT=..., for scripts/device/build.sh); both stay empty when there is no wheel.
cudnn_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else nvidia.cudnn.__path__[0])' 2>/dev/null || true)
cudnn_cmake_args=()
if [ -n "$cudnn_root" ]; then
  cudnn_cmake_args+=(-DCUDNN_ROOT="$cudnn_root")
  export LD_LIBRARY_PATH="$cudnn_root/lib:${LD_LIBRARY_PATH:-}"
fi
