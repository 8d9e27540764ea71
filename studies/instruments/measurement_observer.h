// measure_gpt (studies/instruments/measurement.h) as an observer of a GPT run:
// `train_gpt --measure-at 500,5000` takes the whole record at those steps, on fixed
// held-out batches (the validation split, a fixed seed: the same batches for every run,
// whatever its own seed), into DIR/measurements.json:
//   {"500": record, "5000": record}
// A resumed run keeps the records up to its checkpoint's step and continues the file.
// The regime study reads it; a step past the schedule is never reached.
#pragma once
#include <vector>

#include "train/flags/probe_flags.h"
#include "train/gpt/gpt_run.h"

namespace nl {

// The observer for run_gpt (nothing when no step is asked for).
std::vector<GPTObserverFactory> measurement_observer(const MeasureAtSettings& settings);

// The batches the records are taken on: `count` batches of 32 x T from the validation
// text, drawn with one fixed seed.
std::vector<Tensor> measurement_batches(const TextData& data, int64_t T, int64_t count);

}  // namespace nl
