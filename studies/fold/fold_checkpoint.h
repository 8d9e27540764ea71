// fold_ln (the program, apps/fold_ln.cpp): folds the LayerNorms of a trained `ln` GPT or ViT into CBWC + RMSNorm
// (nn/fold.h) and writes the result as a `cbwc` checkpoint, which train_gpt / train_vit
// --norm cbwc --resume or an evaluation loads like any other. The checkpoint's model
// description says which model it is ("arch": "vit" for a ViT).
//   build/release/fold_ln --in runs/ln --out runs/ln_folded
// It runs the detector on one forward pass and prints its report, centres the linears
// and parameters it names (W -= mean of W over the outputs, per column; b -= mean(b)),
// and checks the folded model against the original: a GPT on held-out text (largest
// |logit difference|, both losses) and by the text each generates from one seed; a ViT
// on the whole Fashion-MNIST test set (largest |logit difference|, how many of the
// 10 000 predicted classes agree, both accuracies).
// The checkpoint keeps the step, the batch generator and the AdamW moments: the cbwc
// model's gradients with respect to its free weights equal the ln model's, so training
// resumed from it continues the ln run's trajectory (tests/train/test_fold_ln.cpp).
// Bad input (a missing file, a checkpoint of another norm, a model the detector cannot
// fold) prints one line naming the problem and exits with code 2, writing nothing.
#pragma once
#include <string>
#include <vector>

namespace nl {

// Runs fold_ln for the command line (the flags after the program's name); returns the
// exit code. Throws nl::Error for bad input, before anything is written.
int fold_ln_main(const std::vector<std::string>& args);

}  // namespace nl
