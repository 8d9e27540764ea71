// convert_nanogpt: renames a GPT's weights between nanoGPT's state_dict names and normlab's
// (train/gpt/nanogpt_names.h), in a safetensors file either way:
//   build/release/convert_nanogpt --to normlab --heads 6 --in nano.safetensors --out ours.safetensors
//   build/release/convert_nanogpt --to nanogpt --in runs/ln --out nano.safetensors
// --to normlab writes the model's description beside the weights, so sample_gpt and
// train_gpt --init-from (with the flags it prints) load the file. --to nanogpt reads a
// run's folder or a normlab checkpoint and prints the GPTConfig to build in nanoGPT.
// What does not map (a vocabulary other than 256 bytes, a missing tensor or a wrong shape,
// a model nanoGPT has no layout for) prints one line naming it and exits with code 2,
// writing nothing. docs/using-a-trained-gpt.md has the whole recipe.
#include <cstdio>
#include <filesystem>

#include "nn/model_json.h"
#include "train/flags/flag_parser.h"
#include "train/flags/program.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/gpt/nanogpt_names.h"
#include "train/io/checkpoint.h"
#include "train/io/safetensors.h"
#include "train/safety/stop_signals.h"

using namespace nl;

namespace {

const char* kGeluNote =
    "note: nanoGPT's GELU is exact (erf), normlab's the tanh approximation: the logits differ slightly\n"
    "      (docs/using-a-trained-gpt.md)\n";

void to_normlab(const std::string& in, const std::string& out, int64_t heads) {
  NL_CHECK(heads > 0, "--heads is required with --to normlab: nanoGPT's state_dict does not record n_head "
                      "(give its GPTConfig's n_head)");
  NL_CHECK(std::filesystem::exists(in), "--in ", in, ": no such file");
  const NormlabWeights w = from_nanogpt(load_safetensors(in, HalfFloats::ToF32).tensors, heads, "--in " + in);
  std::map<std::string, std::string> meta = {{"model", describe_gpt(w.config)}, {"converted_from", in}};
  add_checksums(w.tensors, meta);
  save_safetensors(out, w.tensors, meta);
  std::printf("wrote %s: %zu tensors under normlab's names\n"
              "  sample:  build/release/sample_gpt --in %s\n"
              "  train:   build/release/train_gpt --init-from %s %s\n"
              "%s",
              out.c_str(), w.tensors.size(), out.c_str(), out.c_str(), train_gpt_flags(w.config).c_str(), kGeluNote);
}

void to_nanogpt(const std::string& in, const std::string& out) {
  const std::string file = checkpoint_in(in);
  NL_CHECK(std::filesystem::exists(file), "--in ", file, ": no such file");
  const SafetensorsFile f = load_safetensors(file, HalfFloats::ToF32);
  NL_CHECK(f.metadata.count("model") || !f.tensors.count("transformer.wte.weight"), "--in ", file,
           " has nanoGPT's names already (convert it with --to normlab)");
  const LoadedGPT loaded = load_gpt(in, "--in");
  NamedTensors ours;
  for (const auto& [name, p] : loaded.model->named_parameters()) ours[name] = p.value();
  const GPTConfig& c = loaded.model->config;
  const NamedTensors nano = to_nanogpt(ours, c, "--in " + loaded.file);
  save_safetensors(out, nano, {{"nanogpt_config", nanogpt_config(c)}, {"converted_from", loaded.file}});
  std::printf("wrote %s: %zu tensors under nanoGPT's names (lm_head.weight is tied to transformer.wte.weight)\n"
              "  in nanoGPT: model = GPT(%s)\n"
              "              model.load_state_dict(safetensors.torch.load_file('%s'), strict=False)\n"
              "%s",
              out.c_str(), nano.size(), nanogpt_config(c).c_str(), out.c_str(), kGeluNote);
}

int convert(int argc, char** argv) {
  FlagParser p("convert_nanogpt", "Rename a GPT's weights between nanoGPT's state_dict names and normlab's.");
  std::string to, in, out;
  int64_t heads = 0;
  bool overwrite = false;
  p.choice("--to", to, {"normlab", "nanogpt"}, "the names to write: normlab (from nanoGPT's) or nanogpt (from ours)");
  p.text("--in", in, "a safetensors file (--to normlab); a run's folder or a normlab checkpoint (--to nanogpt)");
  p.text("--out", out, "the safetensors file to write");
  p.integer("--heads", heads, 0, 4096, "n_head of the nanoGPT model (--to normlab; its state_dict lacks it)");
  p.toggle("--overwrite", overwrite, "replace --out when it exists");
  p.check([&] {
    NL_CHECK(!to.empty(), "--to is required: normlab or nanogpt");
    NL_CHECK(!in.empty(), "--in is required");
    NL_CHECK(!out.empty(), "--out is required");
    NL_CHECK(overwrite || !std::filesystem::exists(out), "--out ", out, " exists (--overwrite replaces it)");
    NL_CHECK(to == "normlab" || heads == 0, "--heads: the model records its heads; give it only with --to normlab");
  });
  if (!p.parse(argc, argv)) return 0;
  if (to == "normlab") to_normlab(in, out, heads);
  else to_nanogpt(in, out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  install_stop_signals("convert_nanogpt");
  return run_program("convert_nanogpt", [&] { return convert(argc, argv); });
}
