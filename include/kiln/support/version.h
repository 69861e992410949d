#pragma once
// What this build of Kiln is: its version and the git revision it was configured from (cmake/version.cpp.in,
// filled in at configure time).

namespace kiln {

/// The project version ("0.1.0").
const char* kiln_version();
/// `git describe --always --dirty` of the source tree at configure time (`-dirty` when it had uncommitted changes),
/// or "unknown" when the tree was not a git checkout (a source tarball, a container build without .git). Configure
/// with -DKILN_GIT_REVISION=... to set it by hand.
const char* kiln_git_revision();

}  // namespace kiln
