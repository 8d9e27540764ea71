#include "train/gpt/gpt_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "autograd/ops.h"
#include "tensor/threads.h"
#include "train/io/checkpoint.h"
#include "train/io/checkpoint_keeper.h"
#include "train/safety/distributed.h"
#include "train/safety/flag_checks.h"
#include "train/optim/optim.h"
#include "train/io/run_log.h"
#include "train/gpt/sampling.h"
#include "train/safety/stop_signals.h"
#include "train/data/text_data.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

std::string model_json(const GPTConfig& m) {
  std::ostringstream os;
  os << "{\"vocab\": " << m.vocab << ", \"layers\": " << m.layers << ", \"dim\": " << m.dim
     << ", \"heads\": " << m.heads << ", \"context\": " << m.context << ", \"norm\": \"" << m.norm.name
     << "\", \"eps\": " << m.norm.eps << ", \"dyt_alpha0\": " << m.norm.dyt_alpha0
     << ", \"bhyt_lambda0\": " << m.norm.bhyt_lambda0 << ", \"bhyt_p\": " << m.norm.bhyt_p;
  // written only when they differ from the defaults, so pre-norm models keep the
  // description (and checkpoints) they had before these options existed
  if (m.block != "pre") os << ", \"block\": \"" << m.block << "\"";
  if (m.norm.bhyt_lambda_attn) os << ", \"bhyt_lambda_attn\": " << *m.norm.bhyt_lambda_attn;
  if (m.norm.bhyt_lambda_mlp) os << ", \"bhyt_lambda_mlp\": " << *m.norm.bhyt_lambda_mlp;
  if (m.mlp != "gelu") os << ", \"mlp\": \"" << m.mlp << "\"";
  if (m.emb_scale0 > 0.0f) os << ", \"emb_scale0\": " << m.emb_scale0;
  if (!m.final_norm.empty()) os << ", \"final_norm\": \"" << m.final_norm << "\"";
  os << "}";
  return os.str();
}

// The c_attn caches of the bhyt blocks ("frobenius2:forwards" per block, %.9g: exact
// for a float), so that a resumed run with --bhyt-refresh > 1 uses the same stale value.
std::string encode_c_attn_caches(const GPT& model) {
  std::string out;
  char buf[64];
  for (const auto& b : model.blocks) {
    std::snprintf(buf, sizeof buf, "%s%.9g:%lld", out.empty() ? "" : ",", (double)b->cached_frobenius2(),
                  (long long)b->training_forwards());
    out += buf;
  }
  return out;
}

void restore_c_attn_caches(GPT& model, const std::string& text) {
  std::stringstream ss(text);
  std::string item;
  size_t i = 0;
  while (std::getline(ss, item, ',')) {
    NL_CHECK(i < model.blocks.size(), "checkpoint: bhyt_c_attn holds more entries than the model has blocks");
    const size_t colon = item.find(':');
    NL_CHECK(colon != std::string::npos, "checkpoint: malformed bhyt_c_attn entry '", item, "'");
    model.blocks[i++]->restore_c_attn_cache(std::strtof(item.substr(0, colon).c_str(), nullptr),
                                            std::atoll(item.c_str() + colon + 1));
  }
  NL_CHECK(i == model.blocks.size(), "checkpoint: bhyt_c_attn holds ", i, " entries for ", model.blocks.size(),
           " blocks");
}

void check_run_config(const GPTRunConfig& c) {
  // the flags' own ranges first, so that an error names the flag; the model's consistency last
  NL_CHECK(c.batch > 0 && c.steps > 0, "--batch and --steps must be positive");
  NL_CHECK(c.warmup >= 0, "--warmup must be >= 0");
  NL_CHECK(c.lr > 0 && c.min_lr >= 0 && c.min_lr <= c.lr, "--lr must be positive and --min-lr in [0, lr]");
  NL_CHECK(c.eval_every > 0 && c.eval_batches > 0, "--eval-every and --eval-batches must be positive");
  NL_CHECK(c.threads > 0, "--threads must be positive");
  NL_CHECK(c.device == "cpu" || c.device == "cuda", "--device must be cpu or cuda, got '", c.device, "'");
  NL_CHECK(c.act_stats_every >= 0 && c.act_stats_batch > 0,
           "--act-stats-every must be >= 0 and the act-stats batch positive");
  c.safety.validate();
  NL_CHECK(c.batch % dist::world_size() == 0, "--batch ", c.batch, " (the global batch) must divide by the ",
           dist::world_size(), " ranks");
  NL_CHECK(c.train_bytes == -1 || c.train_bytes > c.model.context, "--train-bytes must exceed the sequence length ",
           c.model.context);
  check_shared_run_flags({c.model.layers, c.model.dim, c.model.heads, c.batch, c.warmup, c.eval_every, c.threads,
                          c.stop_after, c.lr, c.min_lr, c.wd, c.clip, c.model.norm.dyt_alpha0,
                          c.model.norm.bhyt_lambda0});
  check_int_flag("--seq", c.model.context, 1, 65536);
  check_int_flag("--steps", c.steps, 1, kMaxSteps);
  check_int_flag("--eval-batches", c.eval_batches, 1, 1000000);
  check_int_flag("--act-stats-every", c.act_stats_every, 0, kMaxSteps);
  check_int_flag("--bhyt-refresh", c.model.norm.bhyt_refresh, 1, kMaxSteps);
  if (c.model.norm.bhyt_lambda_attn) check_real_flag("--bhyt-lambda-attn", *c.model.norm.bhyt_lambda_attn, -1e6, 1e6);
  if (c.model.norm.bhyt_lambda_mlp) check_real_flag("--bhyt-lambda-mlp", *c.model.norm.bhyt_lambda_mlp, -1e6, 1e6);
  // parameters, gradients and two AdamW moments; per layer about 20 (B, T, dim) activations
  // and 3 (B, heads, T, T) attention maps are kept for the backward pass, plus the logits
  const double d = (double)c.model.dim, L = (double)c.model.layers, T = (double)c.model.context;
  const double B = (double)std::max(c.batch, c.eval_batch_size), V = (double)c.model.vocab;
  const double params = 12.0 * L * d * d + (V + T) * d;
  const double activations = L * (20.0 * B * T * d + 3.0 * B * (double)c.model.heads * T * T) + 3.0 * B * T * V;
  check_memory_estimate(4.0 * (4.0 * params + activations),
                        "the model (--layers, --dim, --heads, --seq) at --batch " + std::to_string(c.batch));
  c.model.validate();
}

// Mean loss over the fixed validation batches, without recording a graph.
float evaluate(GPT& model, const std::vector<std::pair<Tensor, Tensor>>& batches) {
  NoGradGuard no_grad;
  model.eval();
  double total = 0;
  for (const auto& [x, y] : batches) total += model.loss(x, y).item();
  model.train();
  return (float)(total / (double)batches.size());
}

std::string fmt_eta(double seconds) {
  char buf[32];
  int s = (int)std::round(seconds);
  std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

}  // namespace

std::string GPTRunConfig::to_json() const {
  std::ostringstream os;
  os << "{\n  \"model\": " << model_json(model) << ",\n  \"batch\": " << batch << ", \"steps\": " << steps
     << ", \"warmup\": " << warmup << ",\n  \"lr\": " << lr << ", \"min_lr\": " << min_lr << ", \"wd\": " << wd
     << ", \"clip\": " << clip << ", \"beta1\": " << beta1 << ", \"beta2\": " << beta2 << ",\n  \"seed\": " << seed
     << ", \"eval_every\": " << eval_every << ", \"eval_batches\": " << eval_batches
     << ", \"eval_batch_size\": " << eval_batch_size << ", \"train_bytes\": " << train_bytes
     << ", \"threads\": " << threads << ", \"dropout\": " << model.dropout << ", \"bhyt_refresh\": " << model.norm.bhyt_refresh << ", \"act_stats_every\": " << act_stats_every
     << ",\n  \"data_dir\": \"" << data_dir << "\"\n}\n";
  return os.str();
}

GPTRunResult run_gpt(const GPTRunConfig& c) {
  const auto run_start_all = std::chrono::steady_clock::now();
  check_run_config(c);
  set_num_threads(c.threads);
  const int64_t T = c.model.context;
  // Data parallel (train/safety/distributed.h): every rank draws the same global batch and
  // trains on its own rows of it, so the union over ranks is the single-process batch
  // and the batch generator (saved in checkpoints) stays the same on every rank. Only
  // the lead rank writes files, evaluates and prints.
  const bool lead = dist::is_lead();
  const int64_t shard = c.batch / dist::world_size(), shard_start = shard * dist::rank();

  TextData data = load_fortunes(c.data_dir, c.train_bytes);
  NL_CHECK((int64_t)data.val.size() > T, "validation text of ", data.val.size(), " bytes is too short for --seq ", T);
  Generator init_gen(c.seed);
  GPT model(c.model, init_gen);
  model.dropout_gen.manual_seed(c.seed + 4);
  const Device device = c.device == "cuda" ? Device::CUDA : Device::CPU;
  model.to(device);  // before flattening: the flat buffers and the optimizer state follow
  FlatParameters flat = flatten_parameters(model);
  AdamW optim(flat, AdamWConfig{c.beta1, c.beta2, 1e-8f, c.wd});
  TextBatcher batcher(data.train, T, c.seed + 1);
  auto val_batches = fixed_batches(data.val, T, c.eval_batch_size, c.eval_batches, c.seed + 2);
  for (auto& [vx, vy] : val_batches) vx = vx.to(device), vy = vy.to(device);
  // the activation statistics' batch: drawn once, with its own seed, from the validation split
  const Tensor probe_ids = fixed_batches(data.val, T, c.act_stats_batch, 1, c.seed + 5)[0].first.to(device);

  const std::string ckpt = c.out_dir + "/checkpoint.safetensors";
  const std::string log_path = c.out_dir + "/log.csv";
  int64_t start_step = 0;
  if (c.resume) {
    NL_CHECK(fs::exists(ckpt), "--resume: no checkpoint at ", ckpt);
    {
      // load_checkpoint checks the whole file, the model description first, before it
      // changes the live objects
      CheckpointInfo info = load_checkpoint(ckpt, flat, optim, batcher.generator(), model_json(c.model));
      start_step = info.step;
      auto dropout_state = info.metadata.find("dropout_generator");
      if (dropout_state != info.metadata.end())
        model.dropout_gen.set_state(decode_state(dropout_state->second, "dropout_generator"));
      auto caches = info.metadata.find("bhyt_c_attn");
      if (caches != info.metadata.end()) restore_c_attn_caches(model, caches->second);
    }
    NL_CHECK(start_step <= c.steps, "--resume: checkpoint is at step ", start_step, ", past --steps ", c.steps);
  }
  // the same seed (or checkpoint) already gave every rank the same parameters; the
  // broadcast makes that a guarantee rather than an assumption
  dist::broadcast(flat.values, 0);
  dist::barrier();  // every rank has read the checkpoint before the lead may write one

  // every input is valid: from here on files are written (by the lead rank)
  if (lead) create_out_dir(c.out_dir);
  if (lead) write_text_file(c.out_dir + "/config.json", c.to_json());
  CheckpointKeeper keeper(c.out_dir, c.safety.checkpoints);
  if (lead) keeper.prepare(c.resume, start_step);
  int64_t last_checkpoint = c.resume ? start_step : -1;  // every rank's view of keeper.last_step()
  std::string header = "step,train_loss,val_loss,lr,grad_norm,tok_per_s";
  for (int64_t l = 0; l <= c.model.layers; ++l) header += ",rms_" + std::to_string(l);
  std::unique_ptr<CsvLog> log;
  if (lead) log = std::make_unique<CsvLog>(log_path, header, c.resume ? start_step : -1);

  GPTRunResult result;
  result.steps_done = start_step;
  const std::string stats_path = c.out_dir + "/act_stats.csv";
  std::unique_ptr<CsvLog> stats_file;
  auto take_act_stats = [&](int64_t step) {
    const auto t0 = std::chrono::steady_clock::now();
    result.act_stats = activation_stats(model, probe_ids);
    write_act_stats(stats_file->file(), step, result.act_stats);
    stats_file->flush();
    result.act_stats_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (c.act_stats_every > 0 && lead) {
    stats_file = std::make_unique<CsvLog>(stats_path, act_stats_header(), c.resume ? start_step : -1);
    if (start_step == 0) take_act_stats(0);
  }
  // the logs reach the OS before the checkpoint of their last step exists: a resumed
  // run finds every row up to its checkpoint
  auto save_now = [&](int64_t step) {
    last_checkpoint = step;
    if (!lead) return;
    log->sync();
    if (stats_file) stats_file->sync();
    std::map<std::string, std::string> metadata = {{"model", model_json(c.model)},
                                                   {"config", c.to_json()},
                                                   {"dropout_generator", encode_state(model.dropout_gen.state())}};
    if (c.model.norm.name == "bhyt") metadata["bhyt_c_attn"] = encode_c_attn_caches(model);
    keeper.save(step, [&](const std::string& path) {
      save_checkpoint(path, flat, optim, step, batcher.generator(), metadata);
    });
  };
  NonFiniteGuard guard(c.safety.on_nonfinite);

  const bool quiet = c.quiet || !lead;
  const bool tty = !quiet && isatty(fileno(stdout));
  const int64_t end_step = c.stop_after >= 0 ? std::min(c.steps, c.stop_after) : c.steps;
  std::vector<double> step_times;
  Tensor x, y;
  auto run_start = std::chrono::steady_clock::now();
  for (int64_t step = start_step; step < end_step; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    const float lr = lr_at(step, c.steps, c.warmup, c.lr, c.min_lr);
    batcher.next(c.batch, x, y);
    flat.grads.fill_(0.0f);
    Var loss = model.loss(x.slice(0, shard_start, shard_start + shard).to(device),
                          y.slice(0, shard_start, shard_start + shard).to(device));
    // the training forward's, before an evaluation's forwards replace them (the lead's shard)
    const std::vector<float> residual_rms = model.residual_rms();
    loss.backward();
    // equal shards: the mean of the ranks' mean losses and gradients is the global batch's
    dist::allreduce_mean(flat.grads);
    const float train_loss = (float)dist::allreduce_mean((double)loss.item());
    // a NaN/inf stops the run here, before the parameters change, or skips the step
    const std::optional<float> grad_norm =
        guarded_step(guard, step + 1, train_loss, flat, optim, lr, c.clip, result.end);
    if (!grad_norm) {
      result.diverged = true;
      break;
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step_times.push_back(dt);
    const double tok_s = (double)(c.batch * T) / dt;

    const bool last = step + 1 == end_step;
    float val_loss = NAN;
    if (lead && ((step + 1) % c.eval_every == 0 || last)) val_loss = evaluate(model, val_batches);
    result.final_train_loss = train_loss;
    if (!std::isnan(val_loss)) result.final_val_loss = val_loss;
    result.residual_rms = residual_rms;

    std::ostringstream row;
    row.precision(9);  // enough digits to compare runs (ln vs cbwc, resume) exactly
    row << step + 1 << "," << train_loss << ",";
    if (!std::isnan(val_loss)) row << val_loss;
    row << "," << lr << "," << *grad_norm << "," << (int64_t)tok_s;
    for (float r : residual_rms) row << "," << r;
    if (lead) log->row(row.str());
    // at the schedule's end, not at a --stop-after: a resumed run's file then equals an uninterrupted one's
    if (stats_file && ((step + 1) % c.act_stats_every == 0 || step + 1 == c.steps)) take_act_stats(step + 1);

    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const double eta = elapsed / (double)(step + 1 - start_step) * (double)(end_step - step - 1);
    char line[256];
    std::snprintf(line, sizeof line, "step %5lld/%lld  loss %.4f%s  lr %.2e  %7.0f tok/s  ETA %s",
                  (long long)(step + 1), (long long)c.steps, train_loss,
                  std::isnan(val_loss) ? "" : ("  val " + std::to_string(val_loss).substr(0, 6)).c_str(), lr, tok_s,
                  fmt_eta(eta).c_str());
    if (tty) {
      std::printf("\r%s\033[K", line);
      if (!std::isnan(val_loss)) std::printf("\n");
      std::fflush(stdout);
    } else if (!quiet && (!std::isnan(val_loss) || (step + 1) % 50 == 0)) {
      std::printf("%s\n", line);
      std::fflush(stdout);
    }
    result.steps_done = step + 1;
    if (c.after_step) c.after_step(model, step + 1);
    // a signal that reached one rank stops all of them at the same step
    const int signal = dist::allreduce_max(stop_signal());
    if (keeper.due(step + 1) || signal) save_now(step + 1);
    if (signal) {
      result.end.signal = signal;
      break;
    }
  }
  if (lead) log->flush();

  // the end's checkpoint; after a fault the last good one stays as it is
  if (result.end.fault.empty() && last_checkpoint != result.steps_done) save_now(result.steps_done);
  result.end.checkpoint_step = last_checkpoint;
  result.end.checkpoint_path = ckpt;
  result.allreduce_s = dist::allreduce_seconds();
  if (lead && result.steps_done == c.steps)
    write_text_file(c.out_dir + "/sample.txt", sample_text(model, c.sample_bytes, c.temperature, c.top_k, c.seed + 3));
  // median over the steps after the first, whose allocations warm the caches
  std::vector<double> times(step_times.begin() + (step_times.size() > 1 ? 1 : 0), step_times.end());
  if (!times.empty()) {
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    result.tokens_per_s = (double)(c.batch * T) / times[times.size() / 2];
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_all).count();
  return result;
}

}  // namespace nl
