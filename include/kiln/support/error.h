#pragma once
// kiln::Error: the one exception type of Kiln, with a kind and the context that says where.

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln {

/// What went wrong, broadly: bad input from the user, a feature Kiln lacks, a bug in Kiln, or I/O.
enum class ErrorKind { InvalidInput, Unsupported, Internal, Io };

/// Returns "InvalidInput", "Unsupported", "Internal" or "Io".
const char* to_string(ErrorKind kind);

/// Where an error happened: any of the fields may be empty. Printed as "file 'x', node 'y', ...".
struct ErrorContext {
  std::string file;
  std::string node;
  std::string op;
  std::string tensor;

  /// Returns the context as text, or an empty string when every field is empty.
  std::string to_string() const;
};

/// The exception Kiln throws for every failure. what() is one line: "[Kind] message (context)".
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, ErrorContext context = {});

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const ErrorContext& context() const { return context_; }

  /// Returns a copy of this error with the empty fields of its context filled from `outer`.
  Error with_context(const ErrorContext& outer) const;

 private:
  ErrorKind kind_;
  std::string message_;
  ErrorContext context_;
};

namespace detail {
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}
}  // namespace detail

}  // namespace kiln

/// Throws kiln::Error(kind, message parts concatenated) when `cond` is false.
/// Usage: KILN_CHECK(n >= 0, InvalidInput, "negative size ", n, " for tensor '", name, "'");
#define KILN_CHECK(cond, kind, ...)                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      throw ::kiln::Error(::kiln::ErrorKind::kind, ::kiln::detail::concat(__VA_ARGS__)); \
    }                                                                                 \
  } while (0)

/// Throws kiln::Error(kind, message parts concatenated) unconditionally.
#define KILN_FAIL(kind, ...) throw ::kiln::Error(::kiln::ErrorKind::kind, ::kiln::detail::concat(__VA_ARGS__))
