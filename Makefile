# normlab: one entry point.
#   make            build the library, the command-line programs and the tests
#   make test       install missing Debian packages, build, run every test (FILTER=name for one op)
#   make test-asan  the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan  the threaded kernels' tests under ThreadSanitizer (clang, LLVM OpenMP)
#   make fuzz       libFuzzer on the safetensors, IDX and flag parsers (FUZZ_SECONDS each)
#   make valgrind   one short training run under valgrind memcheck
#   make bench      benchmarks (medians and ratios, never pass/fail)
#   make demo       the main job: train the demo GPT with the five norms and compare them
#   make demo-vit   the same comparison for a ViT on Fashion-MNIST
# Options: CUDA=1 (build the CUDA backend), DEBUG=1 (-O0 -g), THREADS=N for demo/bench.

SHELL := /bin/bash
CXX ?= g++
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
NPROC := $(shell nproc 2>/dev/null || echo 2)

# ---- probes: what this machine offers (printed by `make info`, checked before building)
MARCH := $(shell echo 'int main(){}' | $(CXX) -march=native -x c++ - -o /dev/null 2>/dev/null && echo -march=native)
HAVE_OPENMP := $(shell echo 'int main(){}' | $(CXX) -fopenmp -x c++ - -o /dev/null 2>/dev/null && echo yes)
HAVE_OPENBLAS := $(shell printf '\043include <cblas.h>\nint main(){return 0;}\n' | $(CXX) -x c++ - -lopenblas -o /dev/null 2>/dev/null && echo yes)

ifeq ($(SANITIZE),1)
  BUILD := build/asan
  OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),fuzz)
  BUILD := build/fuzz
  OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
  BUILD := build/tsan
  OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
else ifeq ($(DEBUG),1)
  BUILD := build/debug
  OPT := -O0 -g
else
  BUILD := build/release
  OPT := -O3 $(MARCH)
endif
ifeq ($(CUDA),1)
  BUILD := $(BUILD)-cuda
endif

CXXFLAGS := -std=c++17 $(OPT) -Wall -Wextra -Wno-unused-parameter -I. -MMD -MP
ifeq ($(HAVE_OPENMP),yes)
  CXXFLAGS += -fopenmp
  LDFLAGS += -fopenmp
endif
# OpenBLAS's OpenMP build shares our OpenMP thread pool; the default pthread build
# would start a second pool whose spinning threads fight ours for the two cores.
OPENBLAS_OMP := $(wildcard /usr/lib/$(shell $(CXX) -print-multiarch)/openblas-openmp)
# The clang builds (fuzz, tsan) use LLVM's OpenMP runtime, which must not meet libgomp
# (OpenBLAS's OpenMP build links it): they take OpenBLAS's pthread build instead.
ifneq ($(filter fuzz thread,$(SANITIZE)),)
  OPENBLAS_OMP := $(wildcard /usr/lib/$(shell $(CXX) -print-multiarch)/openblas-pthread)
endif
ifneq ($(OPENBLAS_OMP),)
  LDFLAGS += -L$(OPENBLAS_OMP) -Wl,-rpath,$(OPENBLAS_OMP)
endif
LDLIBS := -lopenblas -lz -lm

LIB_SRCS := $(wildcard tensor/*.cpp tensor/cpu/*.cpp autograd/*.cpp nn/*.cpp nn/norms/*.cpp train/*.cpp)
ifeq ($(CUDA),1)
  CU_SRCS := $(wildcard tensor/cuda/*.cu)
  CXXFLAGS += -DNL_CUDA
  NVCCFLAGS := -std=c++17 -O3 -I. -DNL_CUDA -arch=sm_90 -Xcompiler -fopenmp
  LDLIBS += -L/usr/local/cuda/lib64 -lcudart -lcublas
else
  LIB_SRCS += tensor/cuda/stub.cpp
endif
LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/%.o) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
LIB := $(BUILD)/libnormlab.a

CLI_SRCS := $(wildcard train/cli/*.cpp)
CLIS := $(CLI_SRCS:train/cli/%.cpp=$(BUILD)/%)
BENCH_SRCS := $(wildcard bench/*.cpp)
BENCHES := $(BENCH_SRCS:bench/%.cpp=$(BUILD)/%)
TEST_SRCS := $(wildcard tests/*/*.cpp)
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD)/%.o)
TEST_BIN := $(BUILD)/run_tests

.PHONY: all info deps test test-asan test-tsan fuzz valgrind bench demo demo-vit clean
all: info $(LIB) $(CLIS) $(TEST_BIN)

info:
	@echo "normlab build: $(BUILD)  |  OpenBLAS: $(or $(HAVE_OPENBLAS),MISSING)  OpenMP: $(or $(HAVE_OPENMP),no) ($(if $(OPENBLAS_OMP),OpenMP,pthread) OpenBLAS)  march: $(or $(MARCH),generic)  nvcc: $(or $(NVCC),none)  CUDA=$(or $(CUDA),0)"

deps:
	@bash scripts/install-deps.sh

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%: train/cli/%.cpp $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/%: bench/%.cpp $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

# libFuzzer targets, built only in the SANITIZE=fuzz build (scripts/fuzz.sh drives it),
# from the tensor layer and the three parsers only: a third of the library to compile
FUZZ_SRCS := $(wildcard tensor/*.cpp tensor/cpu/*.cpp) tensor/cuda/stub.cpp train/safetensors.cpp \
             train/fashion_mnist.cpp train/args.cpp
FUZZ_OBJS := $(FUZZ_SRCS:%.cpp=$(BUILD)/%.o)
$(BUILD)/%: fuzz/%.cpp $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

# Catch2's main is compiled once, in its own object, and never rebuilt with the tests.
$(BUILD)/catch_main.o: tests/catch_main.cc
	@mkdir -p $(dir $@)
	$(CXX) $(filter-out -MMD -MP,$(CXXFLAGS)) -c $< -o $@

# tests that run the command-line programs find them in this build's folder
$(TEST_OBJS): CXXFLAGS += -DNL_BUILD_DIR='"$(BUILD)"'

$(TEST_BIN): $(TEST_OBJS) $(BUILD)/catch_main.o $(LIB)
	$(CXX) $(CXXFLAGS) $(TEST_OBJS) $(BUILD)/catch_main.o $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

# `make test FILTER=layernorm` runs the tests whose name contains "layernorm".
test: deps
	@$(MAKE) --no-print-directory info
	@bash scripts/check-layers.sh
	@$(MAKE) --no-print-directory -j$(NPROC) $(TEST_BIN) $(CLIS)
	@bash scripts/run-tests.sh $(TEST_BIN) "$(FILTER)"

test-asan: deps
	@$(MAKE) --no-print-directory SANITIZE=1 test

# ThreadSanitizer needs clang and LLVM's OpenMP with its Archer tool: libgomp's own
# synchronisation is invisible to TSan and reads as races (scripts/tsan.sh explains).
test-tsan: deps
	@bash scripts/tsan.sh

# FUZZ_SECONDS per target (default 60); crashes land in build/fuzz/crashes/.
fuzz: deps
	@bash scripts/fuzz.sh $(or $(FUZZ_SECONDS),60)

valgrind: deps
	@bash scripts/valgrind.sh

bench: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BENCHES) $(CLIS)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@bash scripts/demo.sh $(BUILD)

demo-vit: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@bash scripts/demo_vit.sh $(BUILD)

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
