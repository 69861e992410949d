#pragma once
// Checks of a command's output paths before it does its work: each must be writable by the rules of
// write_file_atomic (kiln/support/file.h), and no output may overwrite an input of the same command.

#include <string>
#include <utility>
#include <vector>

namespace kiln::cli {

/// A path a command reads or writes, and what it is called in messages ("the model", "--inputs", ...).
struct NamedPath {
  std::string what;
  std::string path;
  /// A cache file (the timing cache), read and written: it must be a regular file or absent (a character
  /// device, which other outputs may name, is refused too: /dev/zero would be read without end).
  bool cache = false;
};

/// Throws kiln::Error when an output (empty paths are skipped) names the same file as an input (same device
/// and inode: `kiln compile X.pt2 -o X.pt2`, a hard link, a symbolic link to it), or (caches excepted) is a
/// FIFO, directory, symbolic link or other path Kiln does not write (kiln/support/file.h), or a cache is not
/// a regular file.
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace kiln::cli
