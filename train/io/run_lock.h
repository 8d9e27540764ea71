// One writer per run folder: a program that trains into --out holds an exclusive flock
// on OUT/run.lock for the life of the run (resume included), and a second one started
// into the same folder, fresh, --overwrite or --resume, is refused naming the holder's
// pid. Without it two runs started together both passed the folder check and wrote a
// folder mixing the loser's config.json with the winner's checkpoint.
#pragma once
#include <string>
#include <vector>

namespace nl {

// The lock file's name inside a run folder; not a run file (run_dir.h): a stale one left
// by a killed run is taken over by the next.
extern const char* const kRunLockName;

class RunFolderLock {
 public:
  // Takes the lock on `dir` (made, with its missing parents, when missing, and removed
  // again on release while empty), or throws naming `flag`, the folder and the pid that
  // holds it.
  RunFolderLock(const std::string& dir, const std::string& flag);
  // Deletes the lock file while still holding it, then lets go.
  ~RunFolderLock();
  const std::string& path() const { return path_; }
  // The folders the lock made (absolute), the run's first, up to the highest; none when
  // the folder was there.
  std::vector<std::string> made_folders() const;
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  std::string dir_, path_;
  int fd_ = -1;
  bool made_dir_ = false;
  std::string made_top_;  // the highest folder it made (absolute), "" when none
};

}  // namespace nl
