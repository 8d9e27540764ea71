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
namespace fs = std::filesystem;

void create_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create the output folder ", dir, ": ", ec.message());
}

void check_writable_folder(const std::string& dir, const std::string& flag) {
  fs::path p = dir.empty() ? fs::path(".") : fs::path(dir);
  std::error_code ec;
  // the nearest part of the path that exists: a folder not made yet is made in it
  while (!fs::exists(fs::symlink_status(p, ec)) && p.has_relative_path() && p.has_parent_path() &&
         p.parent_path() != p)
    p = p.parent_path();
  if (!fs::exists(p, ec)) p = ".";
  NL_CHECK(fs::is_directory(p, ec), flag, ": ", p.string(), " is not a folder, so ", dir, " cannot be made there");
  if (access(p.c_str(), W_OK | X_OK) != 0)
    fail(flag, ": cannot write in ", p.string(), (p.string() == dir ? "" : " (where " + dir + " would be made)"), ": ",
         std::strerror(errno));
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

int open_regular_file(const std::string& path, const std::string& what, int64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(what, ": cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool fifo = S_ISFIFO(st.st_mode), socket = S_ISSOCK(st.st_mode);
    const bool device = S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode), folder = S_ISDIR(st.st_mode);
    ::close(fd);
    fail(what, ": ", path, " is not a regular file",
         fifo ? " (a FIFO)" : socket ? " (a socket)" : device ? " (a device)" : folder ? " (a folder)" : "");
  }
  // regular files never block; clearing the flag keeps later reads ordinary
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (size) *size = (int64_t)st.st_size;
  return fd;
}

std::string read_text_file(const std::string& path, const std::string& what, int64_t max_bytes) {
  int64_t size = 0;
  const int fd = open_regular_file(path, what, &size);
  if (size > max_bytes) {
    ::close(fd);
    fail(what, ": ", path, " holds ", size, " bytes, more than the ", max_bytes, " expected");
  }
  std::string text((size_t)size, '\0');
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
