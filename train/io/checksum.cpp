#include "train/io/checksum.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>

#include "tensor/error.h"

namespace nl {

uint32_t crc32_bytes(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  // zlib takes 32-bit lengths
  while (n > 0) {
    const size_t chunk = std::min<size_t>(n, 1u << 30);
    c = ::crc32(c, p, (uInt)chunk);
    p += chunk;
    n -= chunk;
  }
  return (uint32_t)c;
}

uint32_t crc32_tensor(const Tensor& t) {
  NL_CHECK(t.device() == Device::CPU && t.is_contiguous(), "crc32_tensor: needs a contiguous CPU tensor, got ",
           describe(t));
  const void* p = t.dtype() == DType::F32 ? (const void*)t.data() : (const void*)t.idata();
  return crc32_bytes(p, (size_t)t.numel() * 4);
}

std::string crc32_hex(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", crc);
  return buf;
}

}  // namespace nl

namespace nl {

std::string data_fingerprint(int64_t bytes, uint32_t crc) {
  return std::to_string(bytes) + " bytes, crc32 " + crc32_hex(crc);
}

}  // namespace nl
