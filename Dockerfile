# Kiln on Debian 12, CPU only: the build installs the packages scripts/setup.sh names, builds Kiln and runs the test
# suite (scripts/test.sh), so an image exists only when the tests pass.
#
#   docker build -t kiln .            # build + tests (about as long as CI's first stage)
#   docker run --rm kiln kiln --version
#
# The CUDA backend is left out (no nvcc in the image; KILN_WITH_CUDA=AUTO turns it off). The git revision comes
# from the KILN_GIT_REVISION build argument, since .git is not copied (.dockerignore):
#   docker build --build-arg KILN_GIT_REVISION=$(git describe --always --dirty) -t kiln .
FROM debian:12

ARG KILN_GIT_REVISION=unknown
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8

WORKDIR /src/kiln
# setup.sh first, alone: its layer (the packages) is cached until the script changes.
COPY scripts/setup.sh scripts/setup.sh
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*

COPY . .
# scripts/test.sh: setup (already done), build (scripts/build.sh: build/, RelWithDebInfo, Ninja), ctest -LE gpu.
RUN KILN_GIT_REVISION="${KILN_GIT_REVISION}" scripts/test.sh \
 && cmake --install build --prefix /usr/local \
 && rm -rf build/test-cache

CMD ["kiln", "--help"]
