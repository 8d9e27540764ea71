// Reading and writing the small files of a run (config.json, result.json, sample.txt,
// a study's results), with every failure an nl::Error naming the file and the reason.
// Every file a program reads is opened through open_regular_file: without blocking, and
// checked to be a regular file before any read, so a FIFO, socket or device in a
// file's place is refused at once instead of hanging the program or reading forever.
#pragma once
#include <cstdint>
#include <string>

namespace nl {

// Creates the folder (and its parents); throws naming it and the reason when it cannot.
void create_out_dir(const std::string& dir);

// Throws, naming `flag` and the folder, unless files can be created in dir: the folder
// exists and is writable, or does not exist yet and its nearest existing ancestor is a
// writable folder. Writes nothing (access(2), which also sees a read-only filesystem).
void check_writable_folder(const std::string& dir, const std::string& flag);

// Writes a whole small file atomically: to path + ".tmp", fsynced, renamed over path.
// Throws naming the file when any step fails.
void write_text_file(const std::string& path, const std::string& text);

// A file descriptor open for reading on the regular file at path (the caller closes
// it), its size in *size when given. Throws, naming `what` (what the file is for the
// message: "--config", "checkpoint") and the file, when it cannot be opened or is not a
// regular file.
int open_regular_file(const std::string& path, const std::string& what, int64_t* size = nullptr);

// The whole of a regular file of at most max_bytes (open_regular_file).
std::string read_text_file(const std::string& path, const std::string& what, int64_t max_bytes = 64 << 20);

}  // namespace nl
