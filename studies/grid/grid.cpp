#include "studies/grid/grid.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "train/flags/train_commands.h"
#include "tensor/error.h"
#include "train/data/fashion_mnist.h"
#include "train/flags/flag_parser.h"
#include "train/io/files.h"
#include "train/io/run_dir.h"
#include "train/loop/progress.h"
#include "train/loop/result_record.h"
#include "train/safety/distributed.h"
#include "train/safety/stop_signals.h"

extern char** environ;

namespace nl {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// What a cell's folder holds: nothing of a run; its finished run; its run stopped after
// a checkpoint; its run stopped before the first checkpoint (nothing to continue).
enum class Found { Nothing, Finished, Unfinished, Unstarted };

// The cell's full command line: its flags, then what the grid sets for every cell, and
// what continues its folder: --resume after a checkpoint, --overwrite where its run
// stopped before one (the same recipe, nothing trained to keep), neither for an empty
// folder (so that a run that appeared there meanwhile is refused, not replaced).
std::vector<std::string> full_args(const GridCell& cell, const GridOptions& o, Found found) {
  std::vector<std::string> a = cell.args;
  for (const std::string& s : {std::string("--out"), cell.out_dir, std::string("--threads"), std::to_string(o.threads),
                               std::string("--quiet")})
    a.push_back(s);
  if (found == Found::Unfinished) a.push_back("--resume");
  if (found == Found::Unstarted) a.push_back("--overwrite");
  return a;
}

// Compares the recipe the folder's config.json records with the cell's; throws naming
// the first flag that differs.
Found inspect(const GridCell& cell, const nlohmann::ordered_json& wanted) {
  const std::string config = cell.out_dir + "/config.json";
  if (!fs::exists(config)) {
    const std::vector<std::string> files = run_files(cell.out_dir);
    NL_CHECK(files.empty(), "grid: cell ", cell.label, ": ", cell.out_dir, " holds a run's files (", files.front(),
             ") but no config.json (not a run of this grid); use another --out");
    return Found::Nothing;
  }
  nlohmann::ordered_json had;
  try {
    had = nlohmann::ordered_json::parse(read_text_file(config, "grid", 1 << 20));
  } catch (const nlohmann::json::exception& e) {
    fail("grid: cell ", cell.label, ": ", config, " is not valid JSON (", e.what(), ")");
  }
  FlagParser p(cell.program, "");
  TrainGptCommand gpt;
  TrainVitCommand vit;
  if (cell.program == "train_gpt") add_train_gpt_flags(p, gpt);
  else add_train_vit_flags(p, vit);
  // a flag the older run did not record counts as its default there
  const std::string difference = first_recipe_difference(had, wanted, p.recipe_keys(), p.values(), "there", "here");
  NL_CHECK(difference.empty(), "grid: cell ", cell.label, ": ", cell.out_dir, " holds a run of another recipe (",
           difference, "); use another --out or remove that folder");
  if (fs::exists(cell.out_dir + "/result.json")) {
    NL_CHECK(read_result(cell.out_dir).is_object(), "grid: cell ", cell.label, ": ", cell.out_dir,
             "/result.json is not a run's result; remove it to run the cell again");
    return Found::Finished;
  }
  return fs::exists(cell.out_dir + "/checkpoint.safetensors") ? Found::Unfinished : Found::Unstarted;
}

struct Running {
  size_t cell;
  int err_fd;
  std::string errors;
  Clock::time_point start;
};

pid_t spawn(const std::string& program, const std::vector<std::string>& args, int& err_fd) {
  std::vector<std::string> argv = {program};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  int pipe_fds[2];
  NL_CHECK(pipe2(pipe_fds, O_CLOEXEC) == 0, "grid: pipe failed: ", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // its progress goes nowhere (it runs --quiet; its figures land in result.json), its
  // errors come back to the grid
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  // a cell is a run of its own: its own process group (a Ctrl-C reaches the grid, which
  // stops the cells once), and none of mpirun's variables, so that an MPI build of the
  // program starts as a single process rather than as a member of the study's job
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.rfind("OMPI_", 0) == 0 || v.rfind("PMIX_", 0) == 0 || v.rfind("PMI_", 0) == 0) continue;
    env_strings.push_back(v);
  }
  std::vector<char*> env;
  for (auto& v : env_strings) env.push_back(v.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, cargs.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    fail("grid: cannot start ", program, ": ", std::strerror(rc));
  }
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  err_fd = pipe_fds[0];
  return pid;
}

void drain(Running& r) {
  char buf[4096];
  ssize_t n;
  while ((n = ::read(r.err_fd, buf, sizeof buf)) > 0) {
    r.errors.append(buf, (size_t)n);
    if (r.errors.size() > 8192) r.errors.erase(0, r.errors.size() - 8192);  // the end says why
  }
}

// The last step a run has logged: the first field of the last whole line of log.csv
// (0 while there is none, or the file cannot be read).
int64_t steps_logged(const std::string& out_dir) {
  std::string text;
  try {
    text = read_text_file(out_dir + "/log.csv", "log", int64_t(1) << 34);
  } catch (const Error&) {
    return 0;
  }
  const size_t header_end = text.find('\n'), last_end = text.rfind('\n');
  if (header_end == std::string::npos || last_end == header_end) return 0;
  const size_t start = text.rfind('\n', last_end - 1) + 1;
  return std::atoll(text.c_str() + start);
}

}  // namespace

// The steps a cell will train, for the progress line and its ETA: --steps, or, for a
// train_vit run given --epochs, what ViTTask::steps() will resolve: ceil(epochs x
// training images / batch), the training images being the file's less --val-size (or
// --train-images of them). 1 when neither is known.
int64_t planned_steps(const nlohmann::ordered_json& config) {
  const int64_t steps = config.value("steps", (int64_t)0);
  if (steps > 0) return steps;
  if (!config.contains("epochs") || !config.contains("batch")) return 1;
  int64_t images = kFashionMnistTrainImages - config.value("val_size", (int64_t)0);
  const int64_t subset = config.value("train_images", (int64_t)-1);
  if (subset > 0) images = std::min(images, subset);
  const double epochs = config["epochs"].get<double>();
  return std::max<int64_t>(1, (int64_t)std::ceil(epochs * (double)images / (double)config["batch"].get<int64_t>()));
}

GridEstimate estimate_grid(const std::vector<GridCell>& cells, int jobs, double step_ms) {
  const std::vector<nlohmann::ordered_json> configs = check_grid(cells);
  GridEstimate e;
  e.runs = cells.size();
  e.step_ms = step_ms;
  e.at_once = effective_jobs(jobs);
  double seconds = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (fs::exists(cells[i].out_dir + "/result.json")) ++e.kept;
    else seconds += (double)planned_steps(configs[i]) * step_ms * cells[i].cost / 1000.0;
  }
  e.minutes = seconds / 60.0 / std::min(e.at_once, effective_jobs(0));
  return e;
}

std::string grid_plan_line(const std::string& study, const GridEstimate& e, const std::string& detail) {
  char cost[160];
  std::snprintf(cost, sizeof cost, "about %.1f minutes at %d at a time (%.0f ms a step, --step-ms)", e.minutes,
                e.at_once, e.step_ms);
  return study + ": " + std::to_string(e.runs) + " runs" + detail + ", " + std::to_string(e.kept) +
         " finished already (kept); " + cost;
}

void print_grid_plan(const std::string& study, const std::vector<GridCell>& cells, int jobs, double step_ms,
                     const std::string& detail) {
  std::printf("%s\n", grid_plan_line(study, estimate_grid(cells, jobs, step_ms), detail).c_str());
}

std::string sibling_program(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  NL_CHECK(!ec, "cannot find this program's folder (/proc/self/exe): ", ec.message());
  return (self.parent_path() / name).string();
}

nlohmann::json read_result(const std::string& out_dir) {
  const std::string path = out_dir + "/result.json";
  if (!fs::exists(path)) return nullptr;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_text_file(path, "result", 16 << 20));
  } catch (const nlohmann::json::exception& e) {
    fail("grid: ", path, " is not valid JSON (", e.what(), ")");
  }
  result_record_of(doc, "grid: " + path);  // every field a run's result has, or an error naming it
  return doc;
}

std::vector<nlohmann::ordered_json> check_grid(const std::vector<GridCell>& cells) {
  std::vector<nlohmann::ordered_json> out;
  std::map<std::string, std::string> folders;
  for (const GridCell& cell : cells) {
    NL_CHECK(folders.emplace(cell.out_dir, cell.label).second, "grid: cells ", folders[cell.out_dir], " and ",
             cell.label, " share the folder ", cell.out_dir);
    try {
      out.push_back(check_command(cell.program, full_args(cell, GridOptions{}, Found::Nothing)));
    } catch (const Error& e) {
      fail("grid: cell ", cell.label, ": ", e.what());
    }
  }
  return out;
}

int effective_jobs(int jobs) { return jobs > 0 ? jobs : std::max(1, (int)sysconf(_SC_NPROCESSORS_ONLN)); }

std::vector<CellOutcome> run_grid(const std::vector<GridCell>& cells, const GridOptions& o) {
  const std::vector<nlohmann::ordered_json> configs = check_grid(cells);
  std::vector<Found> found;
  for (size_t i = 0; i < cells.size(); ++i) found.push_back(inspect(cells[i], configs[i]));
  std::map<std::string, std::string> programs;
  for (const GridCell& c : cells) {
    programs[c.program] = sibling_program(c.program);
    NL_CHECK(fs::exists(programs[c.program]), programs[c.program], " is not built (make ", programs[c.program], ")");
  }
  const int jobs = effective_jobs(o.jobs);

  std::vector<CellOutcome> outcomes(cells.size());
  std::vector<double> work(cells.size()), done_work(cells.size(), 0.0);
  std::vector<int64_t> steps(cells.size(), 0);
  // this rank's share: every cell in one process, cell i on rank i mod N under mpirun
  std::vector<bool> mine(cells.size());
  for (size_t i = 0; i < cells.size(); ++i) mine[i] = (int)(i % (size_t)dist::world_size()) == dist::rank();
  for (size_t i = 0; i < cells.size(); ++i) {
    steps[i] = planned_steps(configs[i]);
    work[i] = cells[i].cost * (double)std::max<int64_t>(steps[i], 1);
    if (found[i] == Found::Finished) {
      outcomes[i].kept = true;
      outcomes[i].exit_code = 0;
      outcomes[i].result = read_result(cells[i].out_dir);
    }
  }
  double total_work = 0;
  for (size_t i = 0; i < cells.size(); ++i)
    if (!outcomes[i].kept && mine[i]) total_work += work[i];

  ProgressLine progress(o.quiet);
  // a signal now stops the cells, which save their checkpoints, before the grid ends
  StopSignalWindow window;
  std::map<pid_t, Running> running;
  size_t next = 0, finished = 0, to_run = 0;
  for (size_t i = 0; i < cells.size(); ++i) to_run += !outcomes[i].kept && mine[i];
  const auto start = Clock::now();
  const double show_every = isatty(fileno(stdout)) ? 1.0 : 60.0;  // seconds between progress lines
  double next_show = show_every;
  auto stop_all = [&](int sig) {
    for (auto& [pid, r] : running) kill(pid, SIGTERM);
    for (auto& [pid, r] : running) {
      int status = 0;
      waitpid(pid, &status, 0);
      ::close(r.err_fd);
    }
    progress.finish();
    fail("grid: stopped by ", signal_name(sig), " after ", finished, " of ", to_run,
         " cells; the running cells wrote their checkpoints, and the same command continues the grid");
  };
  while (true) {
    while (next < cells.size() && (int)running.size() < jobs) {
      const size_t i = next++;
      if (outcomes[i].kept || !mine[i]) continue;
      Running r{i, -1, "", Clock::now()};
      const pid_t pid = spawn(programs[cells[i].program], full_args(cells[i], o, found[i]), r.err_fd);
      running.emplace(pid, std::move(r));
    }
    if (running.empty()) break;
    if (const int sig = stop_signal()) stop_all(sig);
    std::vector<pollfd> fds;
    for (auto& [pid, r] : running) fds.push_back({r.err_fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 200) > 0) {
      bool hung_up = false;
      for (const pollfd& f : fds) hung_up |= (f.revents & POLLHUP) != 0;
      if (hung_up) usleep(20000);  // a child is exiting: give waitpid a moment instead of spinning
    }
    for (auto& [pid, r] : running) drain(r);
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      Running& r = running.at(pid);
      drain(r);
      ::close(r.err_fd);
      CellOutcome& oc = outcomes[r.cell];
      oc.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      oc.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
      oc.errors = r.errors;
      oc.result = read_result(cells[r.cell].out_dir);
      done_work[r.cell] = work[r.cell];
      ++finished;
      const GridCell& cell = cells[r.cell];
      char line[512];
      std::snprintf(line, sizeof line, "  %-28s %s in %.0f s", cell.label.c_str(),
                    oc.exit_code == 0 ? "done" : ("FAILED (exit code " + std::to_string(oc.exit_code) + ")").c_str(),
                    oc.seconds);
      progress.show(line, true, 0);
      if (oc.exit_code != 0 && !oc.errors.empty()) std::fprintf(stderr, "%s", oc.errors.c_str());
      running.erase(pid);
      continue;
    }
    // the progress line: the grid's share of work done, each running cell's step
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed < next_show) continue;
    next_show = elapsed + show_every;
    std::string line = "grid: " + std::to_string(finished) + "/" + std::to_string(to_run) + " done";
    double done = 0;
    for (size_t i = 0; i < cells.size(); ++i) done += done_work[i];
    for (auto& [p, r] : running) {
      const int64_t s = std::min(steps_logged(cells[r.cell].out_dir), steps[r.cell]);
      done += work[r.cell] * (double)s / (double)std::max<int64_t>(steps[r.cell], 1);
      line += ", " + cells[r.cell].label + " " + std::to_string(s) + "/" + std::to_string(steps[r.cell]);
    }
    line += ", ETA " + format_duration(eta_seconds(elapsed, done, total_work));
    progress.show(line, false, 0, 1);
  }
  progress.finish();
  for (size_t i = 0; i < cells.size(); ++i)
    if (mine[i] && o.summarize) outcomes[i].summary = o.summarize(i, outcomes[i]);
  if (dist::world_size() == 1) return outcomes;
  // every rank's cells to the lead
  nlohmann::json share = nlohmann::json::array();
  for (size_t i = 0; i < cells.size(); ++i)
    if (mine[i])
      share.push_back({{"cell", i},
                       {"exit_code", outcomes[i].exit_code},
                       {"kept", outcomes[i].kept},
                       {"seconds", outcomes[i].seconds},
                       {"errors", outcomes[i].errors},
                       {"result", outcomes[i].result},
                       {"summary", outcomes[i].summary}});
  for (const std::string& text : dist::gather_strings(share.dump()))
    for (const auto& c : nlohmann::json::parse(text)) {
      CellOutcome& oc = outcomes[c["cell"].get<size_t>()];
      oc.exit_code = c["exit_code"];
      oc.kept = c["kept"];
      oc.seconds = c["seconds"];
      oc.errors = c["errors"];
      oc.result = c["result"];
      oc.summary = c["summary"];
    }
  return outcomes;
}

std::vector<CellOutcome> run_study_grid(const std::string& study, const std::vector<GridCell>& cells, int jobs,
                                        int threads, const CellSummary& summarize, const std::string& note) {
  const std::vector<nlohmann::ordered_json> configs = check_grid(cells);
  GridOptions options;
  options.jobs = jobs;
  options.threads = threads;
  // what the report needs of a cell, read where its files are (its rank's machine)
  options.summarize = [&](size_t i, const CellOutcome& outcome) { return summarize(i, outcome, configs[i]); };
  std::printf("%s: %zu runs, %d at a time, %d thread(s) each%s\n", study.c_str(), cells.size(),
              effective_jobs(jobs), threads, note.c_str());
  std::fflush(stdout);
  return run_grid(cells, options);
}

void put_grid_outcomes(nlohmann::json& results, const std::vector<CellOutcome>& outcomes) {
  results["runs"] = nlohmann::json::array();
  int64_t kept = 0;
  for (const CellOutcome& oc : outcomes) {
    kept += oc.kept;
    results["runs"].push_back(oc.summary);
  }
  results["cells_run"] = (int64_t)outcomes.size() - kept;
  results["cells_kept"] = kept;
}

nlohmann::json run_specs_json(const std::vector<RunSpec>& specs) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RunSpec& v : specs) {
    const std::string text = spec_text(v);
    rows.push_back({{"label", v.label}, {"flags", text.substr(text.find('=') + 1)}});
  }
  return rows;
}

}  // namespace nl
