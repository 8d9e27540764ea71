// Reading and writing the small files of a run (config.json, result.json, sample.txt,
// a study's results), with every failure an nl::Error naming the file and the reason.
#pragma once
#include <cstdint>
#include <string>

namespace nl {

// Creates the folder (and its parents); throws naming it and the reason when it cannot.
void create_out_dir(const std::string& dir);

// Writes a whole small file atomically: to path + ".tmp", fsynced, renamed over path.
// Throws naming the file when any step fails.
void write_text_file(const std::string& path, const std::string& text);

// The whole of a regular file of at most max_bytes. It is opened without blocking and
// checked before any read, so a FIFO, socket or device in its place is refused at once
// instead of hanging the program. `what` says what the file is for the message
// ("--config", "checkpoint").
std::string read_text_file(const std::string& path, const std::string& what, int64_t max_bytes = 64 << 20);

}  // namespace nl
