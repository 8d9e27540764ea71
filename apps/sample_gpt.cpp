// sample_gpt: text from a trained GPT, streamed to stdout byte by byte as it is drawn:
// the prompt, then --length bytes, each from the model's distribution over the next byte
// (--temperature, then --top-k, then --top-p; train/gpt/sampling.h), the same for a --seed.
//   build/release/sample_gpt --in runs/bhyt --prompt "Q: What is" --length 200
//   build/release/sample_gpt --in runs/bhyt/checkpoint-step400.safetensors --top-k 1   # greedy
// The model is the one the checkpoint records (train/gpt/gpt_checkpoint.h). Bad input (no
// checkpoint, a prompt longer than the model's context, a value out of range) prints one
// line naming the flag and exits with code 2 before any byte is written.
#include <cstdio>

#include "tensor/threads.h"
#include "train/flags/families.h"
#include "train/flags/gpt_flags.h"
#include "train/flags/program.h"
#include "train/gpt/gpt_checkpoint.h"
#include "train/io/files.h"
#include "train/safety/stop_signals.h"

using namespace nl;

namespace {

int sample(int argc, char** argv) {
  FlagParser p("sample_gpt", "Generate text from a trained GPT checkpoint, streamed to stdout.");
  std::string in, prompt, prompt_file, device = "cpu";
  SampleSettings s;
  int threads = 2;
  p.text("--in", in, "the checkpoint: a run's folder (its checkpoint.safetensors) or a .safetensors file");
  p.text("--prompt", prompt, "the text to continue (at most the model's context; empty: a newline, not printed)");
  p.text("--prompt-file", prompt_file, "read the prompt from this file instead (its bytes as they are)");
  add_sample_flags(p, s);
  add_threads_flag(p, threads);
  add_device_flag(p, device, "where the model runs");
  p.check([&] {
    NL_CHECK(!in.empty(), "--in is required: a run's folder or a checkpoint file");
    NL_CHECK(prompt.empty() || prompt_file.empty(), "--prompt and --prompt-file both give the prompt: give one");
  });
  if (!p.parse(argc, argv)) return 0;
  set_num_threads(threads);
  if (!prompt_file.empty()) prompt = read_text_file(prompt_file, "--prompt-file", 1 << 20);
  LoadedGPT loaded = load_gpt(in, "--in");
  const int64_t context = loaded.model->config.context;
  NL_CHECK((int64_t)prompt.size() <= context, prompt_file.empty() ? "--prompt" : "--prompt-file " + prompt_file,
           " is ", prompt.size(), " bytes, longer than the model's context of ", context, " bytes (", loaded.file,
           ")");
  loaded.model->to(device == "cuda" ? Device::CUDA : Device::CPU);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  generate(*loaded.model, prompt, s, [](char ch) {
    std::fputc(ch, stdout);
    std::fflush(stdout);
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  install_stop_signals("sample_gpt", "while sampling (it writes no file)");
  configure_runtime(argv);
  return run_program("sample_gpt", [&] { return sample(argc, argv); });
}
