#include "train/io/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"

namespace nl {
namespace fs = std::filesystem;

const char* const kRunLockName = "run.lock";

namespace {

// The pid the holder wrote into the lock file ("" when unreadable or not yet written).
std::string holder_pid(int fd) {
  char buf[32] = {0};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? (size_t)n : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

}  // namespace

RunFolderLock::RunFolderLock(const std::string& dir, const std::string& flag)
    : dir_(dir), path_((fs::path(dir) / kRunLockName).string()) {
  std::error_code ec;
  // the highest folder of the path that does not exist yet: what the lock makes
  for (fs::path q = fs::absolute(dir, ec); !q.empty() && !fs::exists(q, ec) && q != q.parent_path();
       q = q.parent_path())
    made_top_ = q.string();
  made_dir_ = fs::create_directories(dir, ec);
  NL_CHECK(!ec, flag, " ", dir, ": cannot make the folder: ", ec.message());
  // a holder that deletes the file as it ends leaves a later opener with an unlinked
  // file: lock, then check that the name still leads to the file locked, else again
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    NL_CHECK(fd_ >= 0, flag, " ", dir, ": cannot open the lock file ", path_, ": ", std::strerror(errno));
    struct stat st{};
    NL_CHECK(fstat(fd_, &st) == 0 && S_ISREG(st.st_mode), flag, " ", path_, " is not a regular file");
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string pid = holder_pid(fd_);
      close(fd_);
      fd_ = -1;
      NL_CHECK(err == EWOULDBLOCK, flag, " ", dir, ": cannot lock ", path_, ": ", std::strerror(err));
      fail(flag, " ", dir, ": another run is writing into this folder (pid ", pid.empty() ? "unknown" : pid,
           ", holding ", path_, "); wait for it to end or choose another ", flag);
    }
    struct stat named{};
    if (stat(path_.c_str(), &named) == 0 && named.st_ino == st.st_ino && named.st_dev == st.st_dev) break;
    close(fd_);
    fd_ = -1;
  }
  NL_CHECK(fd_ >= 0, flag, " ", dir, ": the lock file ", path_, " kept changing under this run");
  const std::string pid = std::to_string(getpid()) + "\n";
  NL_CHECK(ftruncate(fd_, 0) == 0 && pwrite(fd_, pid.data(), pid.size(), 0) == (ssize_t)pid.size(), flag, " ", dir,
           ": cannot write the lock file ", path_, ": ", std::strerror(errno));
}

std::vector<std::string> RunFolderLock::made_folders() const {
  std::vector<std::string> folders;
  if (!made_dir_ || made_top_.empty()) return folders;
  std::error_code ec;
  for (fs::path q = fs::absolute(dir_, ec); !q.empty() && q != q.parent_path(); q = q.parent_path()) {
    folders.push_back(q.string());
    if (q.string() == made_top_) break;
  }
  return folders;
}

RunFolderLock::~RunFolderLock() {
  if (fd_ < 0) return;
  unlink(path_.c_str());
  close(fd_);
  if (!made_dir_ || made_top_.empty()) return;
  // the folders it made, from the run's up, while they are empty (a refused run leaves none)
  std::error_code ec;
  for (fs::path q = fs::absolute(dir_, ec); !q.empty() && fs::is_empty(q, ec) && fs::remove(q, ec);
       q = q.parent_path())
    if (q.string() == made_top_) break;
}

}  // namespace nl
