#include "train/io/text_fields.h"

#include <sstream>

namespace nl {

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string flag_key(const std::string& flag) {
  std::string key = flag.rfind("--", 0) == 0 ? flag.substr(2) : flag;
  for (char& c : key)
    if (c == '-') c = '_';
  return key;
}

std::string flag_of_key(const std::string& key) {
  std::string flag = "--" + key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

}  // namespace nl
