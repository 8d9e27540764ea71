// Checkpoints in the safetensors format, so a normlab checkpoint opens in Python
// (safetensors, PyTorch, NumPy) and a file written there opens here:
//   8 bytes   N, the header length, little-endian uint64
//   N bytes   JSON: {"__metadata__": {str: str}, NAME: {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [begin, end]}, ...}, padded with spaces to a multiple of 8
//   the rest  raw little-endian tensor data; offsets are relative to its first byte
// The reader trusts nothing in the file: every inconsistency is an nl::Error that names
// the file and the problem.
#pragma once
#include <map>
#include <string>

#include "tensor/tensor.h"

namespace nl {

struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;        // contiguous, on the CPU
  std::map<std::string, std::string> metadata;  // the header's "__metadata__"
};

// What a reader does with half-precision floats (F16, BF16): a checkpoint is F32 only,
// a file of weights from elsewhere may hold them (--init-from converts them to F32).
enum class HalfFloats { Refuse, ToF32 };

// Reads F32 and I32 tensors; I64 (NumPy's default integer) is narrowed to int32 and
// rejected when a value does not fit; F16 and BF16 become F32 (exactly: every half value
// is a float) when `half` allows them. Every other dtype is an error.
SafetensorsFile load_safetensors(const std::string& path, HalfFloats half = HalfFloats::Refuse);

// Writes F32 as F32 and int32 as I32, tensors in sorted name order, any strides or
// device (copied to contiguous CPU memory first). Atomic: the data goes to
// path + ".tmp", is flushed to disk and then renamed over path, so a crash or an error
// leaves either the old file or the new one; on error the temp file is removed.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace nl
