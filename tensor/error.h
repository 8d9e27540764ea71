// The project's one error type. Every check that can fail on user input throws it,
// with a message that names the op and the shapes or devices involved.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace nl {

struct Error : std::runtime_error {
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Builds a message from any streamable parts: fail("matmul: ", a.shape(), " vs ", b.shape()).
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

}  // namespace nl

// NL_CHECK(cond, parts...) throws nl::Error built from parts when cond is false.
#define NL_CHECK(cond, ...)                 \
  do {                                      \
    if (!(cond)) ::nl::fail(__VA_ARGS__);   \
  } while (0)
