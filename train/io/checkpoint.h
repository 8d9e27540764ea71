// A training checkpoint in safetensors: every parameter under its dotted name, the
// AdamW moments as "optim.m" / "optim.v" (flat, in the parameter buffer's order), and in
// the metadata the step, the run's config (JSON), the batch generator's state, and the
// checksums that let a load refuse a corrupt file:
//   tensor_crc32    {"name": "crc32 of its bytes as stored (8 hex digits)", ...}
//   metadata_crc32  the crc32 of every other metadata entry ("key=value\n", in name order)
// Loading checks, before anything changes: the format, the checksums (a mismatch names
// the tensor or the metadata), the model description, names and shapes, and the values
// (no NaN or infinity anywhere, no negative second moment, which no training writes, and
// nothing beyond the bounds below).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nn/module.h"
#include "tensor/random.h"
#include "train/optim/optim.h"

namespace nl {

constexpr const char* kCheckpointFormat = "normlab-checkpoint-2";

void save_checkpoint(const std::string& path, const FlatParameters& params, const AdamW& optim, int64_t step,
                     const Generator& batch_gen, const std::map<std::string, std::string>& extra_metadata);

struct CheckpointInfo {
  int64_t step = 0;
  std::map<std::string, std::string> metadata;
};

// Sets tensor_crc32 and metadata_crc32 in meta for these tensors (contiguous, on the
// CPU) and the rest of meta: what save_checkpoint records.
void add_checksums(const std::map<std::string, Tensor>& tensors, std::map<std::string, std::string>& meta);

// Restores parameters, optimizer state and generator state in place. Once the format
// and the checksums are found good: when expected_model is given, the checkpoint's
// "model" metadata must equal it (before the tensors, so a checkpoint of another model
// is named as such rather than by a tensor); then check_metadata (when given) sees the
// metadata and may throw (a resumed run's recipe).
CheckpointInfo load_checkpoint(const std::string& path, FlatParameters& params, AdamW& optim, Generator& batch_gen,
                               const std::string& expected_model = "",
                               const std::function<void(const std::map<std::string, std::string>&)>& check_metadata =
                                   nullptr);

// The checkpoint a path names: a run's folder stands for its checkpoint.safetensors,
// anything else is the file itself (--init-from, sample_gpt, --eval-only, fold_ln).
std::string checkpoint_in(const std::string& path);

// --init-from: the parameters alone from a safetensors file (or a run's folder:
// checkpoint_in), as another framework writes one: a tensor per parameter under the
// model's names (Module::named_parameters: "wte.weight", "blocks.0.attn.qkv.weight",
// ...), of the model's shapes, F32 or F16 / BF16 (converted to F32 on load); values
// finite. A normlab checkpoint works too: its optimizer moments are not read, its
// checksums are checked, and when expected_model is given the model it records must be
// that one. Any other tensor, or a missing one, is refused naming it. Returns the
// file's metadata. `what` names the file's role in messages ("--init-from").
std::map<std::string, std::string> load_weights(const std::string& path, FlatParameters& params,
                                                const std::string& expected_model = "",
                                                const std::string& what = "--init-from");

// The largest |value| a loaded weight or first moment may hold, and the largest second
// moment (a mean of squared gradients). Trained weights of these models stay within a
// few units, and a run whose weights reach 1e6 has diverged; one flipped exponent bit
// gives values near 4e36, which these refuse.
constexpr float kMaxLoadedValue = 1e6f;
constexpr float kMaxLoadedSquare = 1e12f;

std::string encode_state(const std::vector<uint64_t>& words);  // "w0,w1,w2,w3"
std::vector<uint64_t> decode_state(const std::string& text, const std::string& what);

}  // namespace nl
