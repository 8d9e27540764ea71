// How a run's files spell lists and names, for every layer that reads them: a comma
// list (a CSV header, a list flag's value) and config.json's keys, which are the flags'
// names ("min_lr" is --min-lr). They live below the flags (train/flags/) because the
// loop and the run folder's checks read config.json and log.csv too, and must not
// depend on the command line.
#pragma once
#include <string>
#include <vector>

namespace nl {

// "a,b,,c" -> {"a", "b", "c"}: a list's items (empty items dropped).
std::vector<std::string> split_list(const std::string& s, char sep = ',');

// "min_lr" <-> "--min-lr": how values() names a flag.
std::string flag_key(const std::string& flag);
std::string flag_of_key(const std::string& key);

}  // namespace nl
