#include "train/io/checkpoint_keeper.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

const char* kHistoryPrefix = "checkpoint-step";
const char* kSuffix = ".safetensors";

// The step of a history file's name, -1 for any other name.
int64_t step_of(const std::string& name) {
  const std::string prefix = kHistoryPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::strtoll(digits.c_str(), nullptr, 10);
}

}  // namespace

void CheckpointPolicy::validate() const {
  NL_CHECK(every >= 0, "--checkpoint-every must be >= 0 (0: only at the end), got ", every);
  NL_CHECK(keep >= 1 && keep <= 1000, "--keep-checkpoints must lie in [1, 1000], got ", keep);
}

CheckpointKeeper::CheckpointKeeper(std::string dir, CheckpointPolicy policy)
    : dir_(std::move(dir)), policy_(policy) {
  policy_.validate();
}

std::string CheckpointKeeper::history_path(int64_t step) const {
  char name[64];
  std::snprintf(name, sizeof name, "%s%08lld%s", kHistoryPrefix, (long long)step, kSuffix);
  return dir_ + "/" + name;
}

std::vector<int64_t> CheckpointKeeper::history_steps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const int64_t s = step_of(e.path().filename().string());
    if (s >= 0) steps.push_back(s);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

void CheckpointKeeper::prepare(bool resume, int64_t start_step) {
  std::remove((latest_path() + ".tmp").c_str());
  for (int64_t s : history_steps())
    if (!resume || s > start_step) std::remove(history_path(s).c_str());
  last_step_ = resume ? start_step : -1;
  prune(start_step);  // a kill between keeping a file and pruning left one too many
}

void CheckpointKeeper::prune(int64_t newest) {
  std::vector<int64_t> history = history_steps();
  history.erase(std::remove(history.begin(), history.end(), newest), history.end());
  const size_t keep_history = (size_t)(policy_.keep - 1);
  for (size_t i = 0; i + keep_history < history.size(); ++i) std::remove(history_path(history[i]).c_str());
}

void CheckpointKeeper::save(int64_t step, const std::function<void(const std::string&)>& write) {
  const std::string latest = latest_path();
  if (policy_.keep > 1 && last_step_ >= 0 && last_step_ != step && fs::exists(latest)) {
    // a second name for the file about to be replaced; it stays whole because files
    // are only ever replaced by rename, never rewritten in place
    const std::string old = history_path(last_step_);
    std::remove(old.c_str());
    if (link(latest.c_str(), old.c_str()) != 0) {
      std::error_code ec;  // a filesystem without hard links: a copy does the same
      fs::copy_file(latest, old, fs::copy_options::overwrite_existing, ec);
      if (ec) fail("keeping the checkpoint of step ", last_step_, " as ", old, " failed: ", ec.message());
    }
  }
  write(latest);
  last_step_ = step;
  prune(step);
}

}  // namespace nl
