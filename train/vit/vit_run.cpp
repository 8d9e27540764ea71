#include "train/vit/vit_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "autograd/ops.h"
#include "tensor/threads.h"
#include "train/io/checkpoint.h"
#include "train/io/checkpoint_keeper.h"
#include "train/safety/flag_checks.h"
#include "train/optim/optim.h"
#include "train/io/run_log.h"
#include "train/safety/stop_signals.h"

namespace nl {
namespace fs = std::filesystem;

namespace {

std::string model_json(const ViTConfig& m) {
  std::ostringstream os;
  os << "{\"arch\": \"vit\", \"image\": " << m.image << ", \"channels\": " << m.channels << ", \"patch\": " << m.patch
     << ", \"classes\": " << m.classes << ", \"layers\": " << m.layers << ", \"dim\": " << m.dim
     << ", \"heads\": " << m.heads << ", \"norm\": \"" << m.norm.name << "\", \"eps\": " << m.norm.eps
     << ", \"dyt_alpha0\": " << m.norm.dyt_alpha0 << ", \"bhyt_lambda0\": " << m.norm.bhyt_lambda0
     << ", \"bhyt_p\": " << m.norm.bhyt_p << "}";
  return os.str();
}

}  // namespace

void ViTRunConfig::validate() const {
  const ViTRunConfig& c = *this;
  // the flags' own ranges first, so that an error names the flag; the model's consistency last
  NL_CHECK(c.model.image == 28 && c.model.channels == 1 && c.model.classes == kFashionMnistClasses,
           "vit run: Fashion-MNIST needs image 28, channels 1, classes 10");
  NL_CHECK(c.batch > 0, "--batch must be positive");
  NL_CHECK(c.steps >= 0, "--steps must be >= 0 (0: use --epochs)");
  NL_CHECK(c.epochs >= 0 && std::isfinite(c.epochs), "--epochs must be >= 0");
  NL_CHECK(c.steps > 0 || c.epochs > 0, "--steps or --epochs must be positive");
  NL_CHECK(c.warmup >= 0, "--warmup must be >= 0");
  NL_CHECK(c.lr > 0 && c.min_lr >= 0 && c.min_lr <= c.lr, "--lr must be positive and --min-lr in [0, lr]");
  NL_CHECK(c.wd >= 0 && c.clip >= 0, "--wd and --clip must be >= 0");
  NL_CHECK(c.eval_every > 0 && c.eval_batch > 0, "--eval-every and --eval-batch must be positive");
  NL_CHECK(c.val_size > 0, "--val-size must be positive");
  NL_CHECK(c.augment.crop_pad >= 0 && c.augment.crop_pad <= 8, "--crop-pad must lie in [0, 8], got ",
           c.augment.crop_pad);
  NL_CHECK(c.threads > 0, "--threads must be positive");
  c.safety.validate();
  check_shared_run_flags({c.model.layers, c.model.dim, c.model.heads, c.batch, c.warmup, c.eval_every, c.threads,
                          c.stop_after, c.lr, c.min_lr, c.wd, c.clip, c.model.norm.dyt_alpha0,
                          c.model.norm.bhyt_lambda0});
  check_int_flag("--patch", c.model.patch, 1, c.model.image);
  check_int_flag("--steps", c.steps, 0, kMaxSteps);
  check_real_flag("--epochs", c.epochs, 0, 1e6);
  check_int_flag("--eval-batch", c.eval_batch, 1, kMaxBatch);
  // parameters, gradients, two AdamW moments; per layer about 20 (B, N, dim) activations
  // and 3 (B, heads, N, N) attention maps for the backward pass (N tokens per image)
  const double d = (double)c.model.dim, L = (double)c.model.layers;
  const double N = (double)(c.model.image / c.model.patch) * (double)(c.model.image / c.model.patch) + 1;
  const double B = (double)std::max(c.batch, c.eval_batch);
  const double params = 12.0 * L * d * d + (double)(c.model.patch * c.model.patch) * d + N * d;
  const double activations = L * (20.0 * B * N * d + 3.0 * B * (double)c.model.heads * N * N);
  check_memory_estimate(4.0 * (4.0 * params + activations),
                        "the model (--layers, --dim, --heads, --patch) at --batch " + std::to_string(c.batch));
  c.model.validate();
}

namespace {

std::string fmt_eta(double seconds) {
  char buf[32];
  int s = (int)std::round(seconds);
  std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

// CPU time used by all of this process's threads: unlike wall time, it does not grow
// when other programs share the cores (a one-thread run's images per CPU second are
// its speed on one core of its own).
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// median over the steps after the first, whose allocations warm the caches; NaN for none
double median_after_first(std::vector<double> times) {
  if (times.size() > 1) times.erase(times.begin());
  if (times.empty()) return NAN;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

int64_t argmax_row(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

}  // namespace

std::string ViTRunConfig::to_json() const {
  std::ostringstream os;
  os << "{\n  \"model\": " << model_json(model) << ",\n  \"batch\": " << batch << ", \"steps\": " << steps
     << ", \"epochs\": " << epochs << ", \"warmup\": " << warmup << ",\n  \"lr\": " << lr << ", \"min_lr\": " << min_lr
     << ", \"wd\": " << wd << ", \"clip\": " << clip << ", \"beta1\": " << beta1 << ", \"beta2\": " << beta2
     << ",\n  \"seed\": " << seed << ", \"split_seed\": " << split_seed << ", \"val_size\": " << val_size
     << ", \"crop_pad\": " << augment.crop_pad << ", \"flip\": " << (augment.flip ? "true" : "false")
     << ",\n  \"eval_every\": " << eval_every << ", \"eval_batch\": " << eval_batch << ", \"threads\": " << threads
     << ",\n  \"data_dir\": \"" << data_dir << "\"\n}\n";
  return os.str();
}

EvalResult evaluate_vit(ViT& model, const ImageSet& set, float mean, float std, int64_t batch,
                        std::array<std::array<int64_t, 10>, 10>* confusion) {
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.eval();
  const int64_t K = model.config.classes;
  double total_loss = 0;
  int64_t correct = 0;
  Tensor x, y;
  for (int64_t first = 0; first < set.size(); first += batch) {
    const int64_t n = std::min(batch, set.size() - first);
    fill_batch(set, {}, first, n, mean, std, x, y);
    const Device device = model.head->weight.value().device();
    Tensor logits = model.forward(Var(x.to(device))).value();
    Tensor lse;
    total_loss += (double)cross_entropy_forward(logits, y.to(device), -100, lse).item() * (double)n;
    logits = logits.contiguous().to(Device::CPU);
    const float* lp = logits.data();
    const int32_t* yp = y.idata();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pred = argmax_row(lp + i * K, K);
      correct += pred == yp[i];
      if (confusion && yp[i] < 10 && pred < 10) (*confusion)[yp[i]][pred] += 1;
    }
  }
  model.train(was_training);
  return {(float)(total_loss / (double)set.size()), (float)correct / (float)set.size()};
}

ViTRunResult run_vit(const ViTRunConfig& config) {
  ViTRunConfig c = config;
  c.validate();
  set_num_threads(c.threads);

  FashionMnist data = load_fashion_mnist(c.data_dir, c.val_size, c.split_seed);
  if (c.steps == 0) c.steps = (int64_t)std::ceil(c.epochs * (double)data.train.size() / (double)c.batch);
  NL_CHECK(c.steps > 0, "--epochs ", c.epochs, " gives no training step");
  Generator init_gen(c.seed);
  ViT model(c.model, init_gen);
  NL_CHECK(c.device == "cpu" || c.device == "cuda", "--device must be cpu or cuda, got '", c.device, "'");
  const Device device = c.device == "cuda" ? Device::CUDA : Device::CPU;
  model.to(device);  // before flattening: the flat buffers and the optimizer state follow
  FlatParameters flat = flatten_parameters(model);
  AdamW optim(flat, AdamWConfig{c.beta1, c.beta2, 1e-8f, c.wd});
  ImageBatcher batcher(data.train, data.mean, data.std, c.augment, c.seed + 1);

  const std::string ckpt = c.out_dir + "/checkpoint.safetensors";
  const std::string log_path = c.out_dir + "/log.csv";
  int64_t start_step = 0;
  if (c.resume) {
    NL_CHECK(fs::exists(ckpt), "--resume: no checkpoint at ", ckpt);
    // load_checkpoint checks the whole file, the model description first, before it
    // changes the live objects
    Generator saved;
    start_step = load_checkpoint(ckpt, flat, optim, saved, model_json(c.model)).step;
    NL_CHECK(start_step <= c.steps, "--resume: checkpoint is at step ", start_step, ", past --steps ", c.steps);
    // the batch order is replayed from the seed; it must land where the checkpoint says
    for (int64_t s = 0; s < start_step; ++s) batcher.skip(c.batch);
    NL_CHECK(saved.state() == batcher.generator().state(), "--resume: checkpoint ", ckpt,
             " was written with another data order (a different --seed, --batch, --val-size or augmentation?)");
  }

  // every input is valid: from here on files are written
  create_out_dir(c.out_dir);
  write_text_file(c.out_dir + "/config.json", c.to_json());
  CheckpointKeeper keeper(c.out_dir, c.safety.checkpoints);
  keeper.prepare(c.resume, start_step);
  std::string header = "step,epoch,train_loss,val_loss,val_acc,lr,grad_norm,img_per_s";
  for (int64_t l = 0; l <= c.model.layers; ++l) header += ",rms_" + std::to_string(l);
  CsvLog log(log_path, header, c.resume ? start_step : -1);
  // the log reaches the OS before the checkpoint of its last step exists
  auto save_now = [&](int64_t step) {
    log.sync();
    keeper.save(step, [&](const std::string& path) {
      save_checkpoint(path, flat, optim, step, batcher.generator(),
                      {{"model", model_json(c.model)}, {"config", c.to_json()}});
    });
  };
  NonFiniteGuard guard(c.safety.on_nonfinite);

  const bool tty = !c.quiet && isatty(fileno(stdout));
  const int64_t end_step = c.stop_after >= 0 ? std::min(c.steps, c.stop_after) : c.steps;
  ViTRunResult result;
  result.steps = c.steps;
  result.steps_done = start_step;
  std::vector<double> step_times, step_cpu_times;
  Tensor x, y;
  auto run_start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  for (int64_t step = start_step; step < end_step; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = process_cpu_seconds();
    const float lr = lr_at(step, c.steps, c.warmup, c.lr, c.min_lr);
    batcher.next(c.batch, x, y);
    flat.grads.fill_(0.0f);
    Var loss = model.loss(Var(x.to(device)), y.to(device));
    loss.backward();
    const float train_loss = loss.item();
    // a NaN/inf stops the run here, before the parameters change, or skips the step
    const std::optional<float> grad_norm =
        guarded_step(guard, step + 1, train_loss, flat, optim, lr, c.clip, result.end);
    if (!grad_norm) {
      result.diverged = true;
      break;
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step_times.push_back(dt);
    step_cpu_times.push_back(process_cpu_seconds() - cpu0);
    const double img_s = (double)c.batch / dt;

    const bool last = step + 1 == end_step;
    EvalResult val{NAN, NAN};
    if ((step + 1) % c.eval_every == 0 || last) {
      val = evaluate_vit(model, data.val, data.mean, data.std, c.eval_batch);
      result.val_loss = val.loss;
      result.val_accuracy = val.accuracy;
    }
    result.final_train_loss = train_loss;
    result.residual_rms = model.residual_rms();

    std::ostringstream row;
    row.precision(9);
    row << step + 1 << "," << (double)(step + 1) * (double)c.batch / (double)data.train.size() << "," << train_loss
        << ",";
    if (!std::isnan(val.loss)) row << val.loss << "," << val.accuracy;
    else row << ",";
    row << "," << lr << "," << *grad_norm << "," << (int64_t)img_s;
    for (float r : model.residual_rms()) row << "," << r;
    log.row(row.str());

    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const double eta = elapsed / (double)(step + 1 - start_step) * (double)(end_step - step - 1);
    char val_text[64] = "";
    if (!std::isnan(val.loss))
      std::snprintf(val_text, sizeof val_text, "  val %.4f acc %5.2f%%", val.loss, 100.0 * val.accuracy);
    char line[256];
    std::snprintf(line, sizeof line, "step %5lld/%lld  epoch %5.2f  loss %.4f%s  lr %.2e  %6.0f img/s  ETA %s",
                  (long long)(step + 1), (long long)c.steps, batcher.epoch(), train_loss, val_text, lr, img_s,
                  fmt_eta(eta).c_str());
    if (tty) {
      std::printf("\r%s\033[K", line);
      if (!std::isnan(val.loss)) std::printf("\n");
      std::fflush(stdout);
    } else if (!c.quiet && !std::isnan(val.loss)) {
      std::printf("%s\n", line);
      std::fflush(stdout);
    }
    result.steps_done = step + 1;
    if (keeper.due(step + 1) || stop_signal()) save_now(step + 1);
    if (stop_signal()) {
      result.end.signal = stop_signal();
      break;
    }
  }
  log.flush();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  result.cpu_seconds = process_cpu_seconds() - cpu_start;

  // the end's checkpoint; after a fault the last good one stays as it is
  if (result.end.fault.empty() && keeper.last_step() != result.steps_done) save_now(result.steps_done);
  result.end.checkpoint_step = keeper.last_step();
  result.end.checkpoint_path = ckpt;
  result.images_per_s = (double)c.batch / median_after_first(step_times);
  result.images_per_cpu_s = (double)c.batch / median_after_first(step_cpu_times);

  if (result.steps_done == c.steps) {
    EvalResult test = evaluate_vit(model, data.test, data.mean, data.std, c.eval_batch, &result.confusion);
    result.tested = true;
    result.test_loss = test.loss;
    result.test_accuracy = test.accuracy;
    const auto& names = fashion_mnist_classes();
    std::ostringstream cm;
    cm << "true\\predicted";
    for (const auto& n : names) cm << "," << n;
    cm << "\n";
    for (int t = 0; t < 10; ++t) {
      cm << names[t];
      for (int p = 0; p < 10; ++p) cm << "," << result.confusion[t][p];
      cm << "\n";
    }
    write_text_file(c.out_dir + "/confusion.csv", cm.str());
    std::ostringstream res;
    res.precision(9);
    res << "{\"steps\": " << result.steps_done << ", \"test_loss\": " << result.test_loss
        << ", \"test_accuracy\": " << result.test_accuracy << ", \"val_loss\": " << result.val_loss
        << ", \"val_accuracy\": " << result.val_accuracy << ", \"final_train_loss\": " << result.final_train_loss
        << ", \"images_per_s\": " << result.images_per_s << ", \"images_per_cpu_s\": " << result.images_per_cpu_s
        << ", \"seconds\": " << result.seconds << ", \"cpu_seconds\": " << result.cpu_seconds
        << ", \"diverged\": " << (result.diverged ? "true" : "false") << ", \"residual_rms\": [";
    for (size_t i = 0; i < result.residual_rms.size(); ++i) res << (i ? ", " : "") << result.residual_rms[i];
    res << "]}\n";
    write_text_file(c.out_dir + "/result.json", res.str());
  }
  return result;
}

}  // namespace nl
