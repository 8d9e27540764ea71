// Small helpers shared by the programs that run a study of many training runs and
// write a report (compare_norms, depth_study, regime_study).
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "train/flags/flag_parser.h"  // split_list

namespace nl {

using StudyClock = std::chrono::steady_clock;
double seconds_since(StudyClock::time_point t);

// The 1-minute load average (/proc/loadavg; NaN where unreadable), to say how busy the
// shared machine was while a run took its time.
double load_average();

// The middle element (the upper one of an even count); NaN when empty.
double median(std::vector<double> v);

// printf-style formatting of one number for a report.
std::string fmt(double v, const char* format = "%.4g");

// (step, the text of column `column`) of the rows of a run's log.csv whose cell in that
// column is not empty: the validation curve. Column 2 (0-based) is train_gpt's val_loss
// (train/gpt/gpt_run.h); train_vit's val_acc is column 4.
std::vector<std::pair<int64_t, std::string>> val_curve(const std::string& log_path, int column = 2);

// "mean (smallest-largest)" of the finite values of a sample over seeds, printf-style
// `format` for each; the mean alone for one value, "-" for none.
std::string range_text(const std::vector<double>& v, const char* format);

// Throws unless the report `doc` can be written: its folder exists and is writable
// (checked before hours of training go into it).
void check_doc_folder(const std::string& doc);

// Today's date as YYYY-MM-DD, for "generated on".
std::string today();

}  // namespace nl
