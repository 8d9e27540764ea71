#include "train/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"

namespace nl {

void create_out_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create the output folder ", dir, ": ", ec.message());
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) fail("cannot write ", tmp, ": ", std::strerror(errno));
  errno = 0;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  int err = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!err) err = errno;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    fail("writing ", tmp, " failed: ", std::strerror(err ? err : EIO));
  }
}

std::string read_text_file(const std::string& path, const std::string& what, int64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(what, ": cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(what, ": ", path, " is not a regular file");
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    fail(what, ": ", path, " holds ", st.st_size, " bytes, more than the ", max_bytes, " expected");
  }
  std::string text((size_t)st.st_size, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      fail(what, ": reading ", path, " failed: ", err ? std::strerror(err) : "the file shrank while it was read");
    }
    got += (size_t)n;
  }
  ::close(fd);
  return text;
}

}  // namespace nl
