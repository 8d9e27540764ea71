#include "train/io/run_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "train/io/files.h"
#include "train/io/text_fields.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool is_run_file(const std::string& file) {
  const std::string name = ends_with(file, ".tmp") ? file.substr(0, file.size() - 4) : file;
  for (const char* n : {"config.json", "log.csv", "act_stats.csv", "measurements.json", "result.json", "sample.txt",
                        "confusion.csv", "fold_report.txt", "checkpoint.safetensors"})
    if (name == n) return true;
  const std::string prefix = "checkpoint-step", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 || !ends_with(name, suffix))
    return false;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return digits.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> run_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (is_run_file(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_run_folder_name(const std::string& dir, const std::string& flag) {
  NL_CHECK(!dir.empty(), flag, " is empty: name the run's folder");
  for (unsigned char c : dir)
    NL_CHECK(c >= 0x20 && c != 0x7f, flag, " holds a control character (byte ", (int)c,
             "): a run's folder needs a name that prints on one line");
  // --overwrite deletes the run files it finds in the folder: never in / or the home folder
  std::error_code ec;
  const fs::path here = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  NL_CHECK(here != fs::path("/") && here.has_relative_path(), flag, " ", dir,
           " is the filesystem's root, which cannot be a run's folder");
  if (const char* home = std::getenv("HOME"); home && *home) {
    const fs::path h = fs::weakly_canonical(fs::path(home), ec);
    NL_CHECK(ec || here != h, flag, " ", dir, " is the home folder, which cannot be a run's folder");
  }
}

void check_fresh_folder(const std::string& dir, const std::string& flag, bool resume, bool overwrite) {
  check_run_folder_name(dir, flag);
  std::error_code ec;
  // a dangling link is not a missing folder: exists() follows it and says no, and making
  // the folder would then fail with a bare "File exists"
  if (fs::is_symlink(fs::symlink_status(dir, ec)) && !fs::exists(dir, ec))
    fail(flag, " ", dir, " is a link to ", fs::read_symlink(dir, ec).string(), ", which does not exist");
  NL_CHECK(!fs::exists(dir, ec) || fs::is_directory(dir, ec), flag, " ", dir, " is not a folder");
  check_writable_folder(dir, flag);
  if (resume || overwrite) return;
  const std::vector<std::string> files = run_files(dir);
  if (files.empty()) return;
  std::string names;
  for (size_t i = 0; i < files.size() && i < 3; ++i) names += (i ? ", " : "") + files[i];
  if (files.size() > 3) names += ", ...";
  fail(flag, " ", dir, " holds another run (", names,
       "): continue it with --resume, replace it with --overwrite, or choose another ", flag);
}

void remove_run_files(const std::string& dir) {
  for (const std::string& name : run_files(dir)) {
    const std::string path = (fs::path(dir) / name).string();
    if (std::remove(path.c_str()) != 0)
      fail("--overwrite: cannot delete ", path, " of the old run: ", std::strerror(errno));
  }
}

std::string first_recipe_difference(const nlohmann::ordered_json& recorded, const nlohmann::ordered_json& here,
                                    const std::vector<std::string>& keys, const nlohmann::ordered_json& defaults,
                                    const std::string& there_name, const std::string& here_name) {
  nlohmann::ordered_json there = recorded;
  if (there.is_object() && defaults.is_object())
    for (const std::string& key : keys)
      if (!there.contains(key) && defaults.contains(key)) there[key] = defaults[key];
  auto value = [](const nlohmann::ordered_json& j, const std::string& key) {
    if (!j.is_object() || !j.contains(key)) return std::string("unset");
    const auto& v = j[key];
    if (v.is_string()) return v.get<std::string>().empty() ? std::string("\"\"") : v.get<std::string>();
    // as the flag is written: 1 rather than 1.0
    if (v.is_number_float() && std::fabs(v.get<double>()) < 1e15 && v.get<double>() == std::floor(v.get<double>()))
      return std::to_string((long long)v.get<double>());
    return v.dump();
  };
  for (const std::string& key : keys) {
    const bool a = there.is_object() && there.contains(key), b = here.is_object() && here.contains(key);
    if (a && b && there[key] == here[key]) continue;
    return flag_of_key(key) + " " + value(there, key) + " " + there_name + ", " + value(here, key) + " " + here_name;
  }
  return "";
}

}  // namespace nl
