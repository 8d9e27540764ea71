// CRC-32 (zlib's crc32, the checksum of gzip and PNG) of bytes and of tensors: what a
// checkpoint records for each tensor and for its metadata, and what identifies the data
// a run trained on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace nl {

// The CRC-32 of n bytes, continuing `crc` (0 to start).
uint32_t crc32_bytes(const void* data, size_t n, uint32_t crc = 0);

// Of a contiguous CPU tensor's bytes as they lie in memory (and in a safetensors file).
uint32_t crc32_tensor(const Tensor& t);

// "0a1b2c3d"
std::string crc32_hex(uint32_t crc);

// "2534123 bytes, crc32 0a1b2c3d": what a task records of its data (TrainTask::data_fingerprint).
std::string data_fingerprint(int64_t bytes, uint32_t crc);

}  // namespace nl
