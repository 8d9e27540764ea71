#include "studies/depth/depth_study.h"

#include <cstdio>

#include "studies/depth/depth_plan.h"
#include "studies/depth/depth_report.h"
#include "studies/depth/depth_run.h"
#include "studies/report/study.h"
#include "tensor/error.h"
#include "train/io/files.h"

namespace nl {

int depth_study_main(const std::vector<std::string>& args) {
  DepthFlags flags;
  if (!parse_depth_flags(args, flags)) return 0;
  if (flags.speed_only) {
    print_depth_speed(flags);
    return 0;
  }
  NL_CHECK(!flags.dry_run || !flags.reuse, "--dry-run prices runs to train; --reuse trains none: give one of them");
  check_doc_folder(flags.doc);  // the report's folder must take a file before hours of training go into it
  DepthResults results;
  if (flags.reuse) {
    results = read_depth_results(flags.base.out_dir);
  } else {
    const std::vector<GridCell> cells = plan_depth(flags);
    if (flags.dry_run) {
      const GridEstimate cost = estimate_depth(cells, flags);
      std::printf("%s\n", grid_plan_line("depth_study", cost, " in " + flags.base.out_dir).c_str());
      return 0;
    }
    std::optional<DepthResults> ran = run_depth(flags, cells);
    if (!ran) return 0;  // a rank other than the lead: the lead writes
    results = *ran;
    write_text_file(flags.base.out_dir + "/results.json", results.to_json().dump(1) + "\n");
  }
  report_depth(results, flags);
  return 0;
}

}  // namespace nl
