// The readers under fuzzing take a path, so each input is written to one scratch file
// per process first (in /dev/shm when it exists: memory, not disk).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace nl::fuzz {

inline const std::string& scratch_path(const char* name) {
  static const std::string path = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  "/normlab_fuzz_" + name + "_" + std::to_string(getpid());
  return path;
}

inline const std::string& write_input(const char* name, const uint8_t* data, size_t size) {
  const std::string& path = scratch_path(name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace nl::fuzz
