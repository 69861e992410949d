#include "output_paths.h"

#include <sys/stat.h>

#include "kiln/support/error.h"
#include "kiln/support/file.h"

namespace kiln::cli {

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    for (const NamedPath& in : inputs) {
      KILN_CHECK(in.path.empty() || !same_file(out.path, in.path), InvalidInput, out.what, " '", out.path,
                 "' is the same file as ", in.what, " '", in.path,
                 "': refusing to overwrite an input of this command");
    }
    // What write_file_atomic would refuse (kiln/support/file.h), refused before the command does its work.
    struct stat st {};
    if (::lstat(out.path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) continue;
    KILN_CHECK(!out.cache, Io, "refusing to use '", out.path, "' as ", out.what, ": it is ",
               file_kind(st.st_mode), ", not a regular file");
    if (!S_ISCHR(st.st_mode)) {
      KILN_FAIL(Io, "refusing to write '", out.path, "': it is ", file_kind(st.st_mode),
                S_ISLNK(st.st_mode) ? " (Kiln replaces only regular files; name the link's target)"
                                    : ", not a regular file");
    }
  }
}

}  // namespace kiln::cli
