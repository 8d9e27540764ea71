// Tensor: creation, metadata, views over shared storage, copies, element access and
// printing. Every expected value below is written out by hand from the definition
// (row-major order, strides in elements), never produced by the code under test.
#include <catch2/catch.hpp>

#include <vector>

#include "tensor/tensor.h"
#include "tests/test_util.h"

using nl::Shape;
using nl::Tensor;
using V = std::vector<float>;

TEST_CASE("tensor creation zeros ones full", "[tensor]") {
  Tensor z = Tensor::zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.dtype() == nl::DType::F32);
  CHECK(z.device() == nl::Device::CPU);
  CHECK(z.to_vector() == V{0, 0, 0, 0, 0, 0});

  CHECK(Tensor::ones({3}).to_vector() == V{1, 1, 1});
  CHECK(Tensor::full({2, 2}, -2.5f).to_vector() == V{-2.5f, -2.5f, -2.5f, -2.5f});

  Tensor zi = Tensor::zeros({4}, nl::DType::I32);
  CHECK(zi.dtype() == nl::DType::I32);
  CHECK(zi.to_ints() == std::vector<int32_t>{0, 0, 0, 0});
}

TEST_CASE("tensor creation arange from_vector from_ints scalar", "[tensor]") {
  Tensor a = Tensor::arange(5);
  CHECK(a.shape() == Shape{5});
  CHECK(a.to_vector() == V{0, 1, 2, 3, 4});
  CHECK(Tensor::arange(0).numel() == 0);

  Tensor v = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(v.shape() == Shape{3, 2});
  CHECK(v.at({0, 0}) == 1);
  CHECK(v.at({1, 0}) == 3);
  CHECK(v.at({2, 1}) == 6);

  Tensor i = Tensor::from_ints({7, -1, 3}, {3});
  CHECK(i.dtype() == nl::DType::I32);
  CHECK(i.to_ints() == std::vector<int32_t>{7, -1, 3});
  CHECK(i.at({1}) == -1.0f);
  CHECK(i.to_vector() == V{7, -1, 3});

  Tensor s = Tensor::scalar(3.5f);
  CHECK(s.dim() == 0);
  CHECK(s.shape().empty());
  CHECK(s.numel() == 1);
  CHECK(s.item() == 3.5f);
  CHECK(s.at({}) == 3.5f);
}

TEST_CASE("tensor metadata shape strides numel contiguity", "[tensor]") {
  Tensor t = Tensor::zeros({2, 3, 4});
  CHECK(t.dim() == 3);
  CHECK(t.numel() == 24);
  CHECK(t.strides() == Shape{12, 4, 1});
  CHECK(t.offset() == 0);
  CHECK(t.size(0) == 2);
  CHECK(t.size(-1) == 4);
  CHECK(t.is_contiguous());
  CHECK(t.defined());
  CHECK_FALSE(Tensor().defined());

  Tensor tt = t.transpose(0, 2);
  CHECK(tt.shape() == Shape{4, 3, 2});
  CHECK(tt.strides() == Shape{1, 4, 12});
  CHECK_FALSE(tt.is_contiguous());

  // size-1 dims do not matter for contiguity, whatever their stride
  Tensor u = Tensor::zeros({3}).unsqueeze(0);
  CHECK(u.shape() == Shape{1, 3});
  CHECK(u.is_contiguous());
}

TEST_CASE("tensor reshape is a view sharing storage when possible", "[tensor]") {
  Tensor base = Tensor::arange(6);
  Tensor r = base.reshape({2, 3});
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.strides() == Shape{3, 1});
  CHECK(r.shares_storage(base));
  // element (1, 2) is flat index 1*3 + 2 = 5
  CHECK(r.at({1, 2}) == 5);
  r.set({1, 0}, 100);  // flat index 3
  CHECK(base.to_vector() == V{0, 1, 2, 100, 4, 5});

  Tensor inferred = base.reshape({-1, 2});
  CHECK(inferred.shape() == Shape{3, 2});
  CHECK(base.reshape({3, -1}).shape() == Shape{3, 2});
  CHECK(base.reshape({1, -1, 1}).shape() == Shape{1, 6, 1});
  CHECK(inferred.shares_storage(base));

  Tensor v = base.view({3, 2});
  CHECK(v.shares_storage(base));
  v.set({2, 1}, -5);  // flat index 5
  CHECK(base.at({5}) == -5);
}

TEST_CASE("tensor reshape of a transposed tensor copies in logical order", "[tensor]") {
  // m = [[0 1 2], [3 4 5]]; m^T = [[0 3], [1 4], [2 5]]
  Tensor m = Tensor::arange(6).reshape({2, 3});
  Tensor t = m.transpose(0, 1);
  Tensor flat = t.reshape({6});
  CHECK(flat.to_vector() == V{0, 3, 1, 4, 2, 5});
  CHECK_FALSE(flat.shares_storage(m));
  flat.set({0}, 99);
  CHECK(m.at({0, 0}) == 0);

  // splitting only one dim of the transposed tensor needs no copy
  Tensor split = t.reshape({3, 2, 1});
  CHECK(split.shares_storage(m));
  CHECK(split.at({2, 1, 0}) == 5);
}

TEST_CASE("tensor view of a non-contiguous slice works where strides allow", "[tensor]") {
  // rows 0 and 2 of a 4x3 matrix: strides (6, 1); viewing as (2, 3, 1) or splitting
  // the inner dim is fine, merging the two rows is not
  Tensor m = Tensor::arange(12).reshape({4, 3});
  Tensor rows = m.slice(0, 0, 4, 2);
  CHECK(rows.strides() == Shape{6, 1});
  Tensor v = rows.view({2, 3, 1});
  CHECK(v.shares_storage(m));
  CHECK(v.at({1, 2, 0}) == 8);
  CHECK_THROWS_AS(rows.view({6}), nl::Error);
  CHECK(rows.reshape({6}).to_vector() == V{0, 1, 2, 6, 7, 8});
}

TEST_CASE("tensor transpose and permute are views", "[tensor]") {
  // x[i][j][k] = 12 i + 4 j + k, shape (2, 3, 4)
  Tensor x = Tensor::arange(24).reshape({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.strides() == Shape{1, 12, 4});
  CHECK(p.shares_storage(x));
  // p[k][i][j] = x[i][j][k]: p[3][1][2] = x[1][2][3] = 12 + 8 + 3
  CHECK(p.at({3, 1, 2}) == 23);
  CHECK(p.at({1, 0, 2}) == 9);

  Tensor t = x.transpose(-1, 0);
  CHECK(t.shape() == Shape{4, 3, 2});
  CHECK(t.at({2, 1, 1}) == 12 + 4 + 2);
  t.set({0, 0, 1}, -1);  // x[1][0][0], flat index 12
  CHECK(x.at({1, 0, 0}) == -1);

  // permute with negative axes is the same permutation
  CHECK(x.permute({-1, 0, 1}).strides() == Shape{1, 12, 4});
}

TEST_CASE("tensor slice with step and negative start", "[tensor]") {
  Tensor a = Tensor::arange(10);
  Tensor s = a.slice(0, 1, 8, 3);  // 1, 4, 7
  CHECK(s.shape() == Shape{3});
  CHECK(s.strides() == Shape{3});
  CHECK(s.offset() == 1);
  CHECK(s.to_vector() == V{1, 4, 7});
  CHECK(s.shares_storage(a));
  s.set({2}, 70);
  CHECK(a.at({7}) == 70);

  CHECK(a.slice(0, -3, 10).to_vector() == V{70, 8, 9});  // a[7] was set to 70 above
  CHECK(a.slice(0, -4, -1).to_vector() == V{6, 70, 8});
  CHECK(a.slice(0, 2, 100).numel() == 8);  // end clamps to the size
  CHECK(a.slice(0, 5, 5).numel() == 0);

  // m = arange(12) as (3, 4); columns 1 and 3 of rows 1..2
  Tensor m = Tensor::arange(12).reshape({3, 4});
  Tensor c = m.slice(1, 1, 4, 2).slice(0, 1, 3);
  CHECK(c.shape() == Shape{2, 2});
  CHECK(c.strides() == Shape{4, 2});
  CHECK(c.offset() == 5);
  CHECK(c.to_vector() == V{5, 7, 9, 11});
  CHECK_FALSE(c.is_contiguous());
}

TEST_CASE("tensor squeeze and unsqueeze", "[tensor]") {
  Tensor a = Tensor::arange(6).reshape({2, 1, 3});
  Tensor s = a.squeeze(1);
  CHECK(s.shape() == Shape{2, 3});
  CHECK(s.strides() == Shape{3, 1});
  CHECK(s.shares_storage(a));
  CHECK(a.squeeze(-2).shape() == Shape{2, 3});

  Tensor u = s.unsqueeze(0);
  CHECK(u.shape() == Shape{1, 2, 3});
  CHECK(s.unsqueeze(-1).shape() == Shape{2, 3, 1});
  CHECK(s.unsqueeze(2).shape() == Shape{2, 3, 1});
  CHECK(s.unsqueeze(1).shape() == Shape{2, 1, 3});
  CHECK(u.at({0, 1, 2}) == 5);
  u.set({0, 0, 1}, 42);
  CHECK(a.at({0, 0, 1}) == 42);

  Tensor sc = Tensor::scalar(2).unsqueeze(0);
  CHECK(sc.shape() == Shape{1});
  CHECK(sc.squeeze(0).dim() == 0);
}

TEST_CASE("tensor expand uses stride 0", "[tensor]") {
  Tensor col = Tensor::from_vector({1, 2, 3}, {3, 1});
  Tensor e = col.expand({3, 4});
  CHECK(e.shape() == Shape{3, 4});
  CHECK(e.strides() == Shape{1, 0});
  CHECK(e.shares_storage(col));
  CHECK(e.to_vector() == V{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK_FALSE(e.is_contiguous());

  // new leading dims also get stride 0
  Tensor row = Tensor::from_vector({5, 6}, {2});
  Tensor e2 = row.expand({3, 2});
  CHECK(e2.strides() == Shape{0, 1});
  CHECK(e2.to_vector() == V{5, 6, 5, 6, 5, 6});

  // writing the base is seen through every broadcast copy
  col.set({1, 0}, -2);
  CHECK(e.at({1, 3}) == -2);
  CHECK(e.at({1, 0}) == -2);
}

TEST_CASE("tensor contiguous returns itself or an ordered copy", "[tensor]") {
  Tensor a = Tensor::arange(6).reshape({2, 3});
  Tensor same = a.contiguous();
  CHECK(same.shares_storage(a));
  CHECK(same.data() == a.data());

  // a^T = [[0 3], [1 4], [2 5]]
  Tensor t = a.transpose(0, 1);
  Tensor c = t.contiguous();
  CHECK_FALSE(c.shares_storage(a));
  CHECK(c.is_contiguous());
  CHECK(c.shape() == Shape{3, 2});
  CHECK(c.strides() == Shape{2, 1});
  const float* p = c.data();
  CHECK(std::vector<float>(p, p + 6) == V{0, 3, 1, 4, 2, 5});

  // an offset contiguous slice is already contiguous: no copy
  Tensor row = a.slice(0, 1, 2);
  CHECK(row.is_contiguous());
  Tensor rc = row.contiguous();
  CHECK(rc.shares_storage(a));
  CHECK(rc.data()[0] == 3);

  Tensor e = Tensor::from_vector({7, 8}, {2}).expand({2, 2}).contiguous();
  const float* q = e.data();
  CHECK(std::vector<float>(q, q + 4) == V{7, 8, 7, 8});
}

TEST_CASE("tensor clone is independent", "[tensor]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  Tensor b = a.clone();
  CHECK_FALSE(b.shares_storage(a));
  CHECK(b.to_vector() == V{1, 2, 3, 4});
  b.set({0, 1}, 20);
  a.set({1, 0}, 30);
  CHECK(a.to_vector() == V{1, 2, 30, 4});
  CHECK(b.to_vector() == V{1, 20, 3, 4});

  Tensor ct = a.transpose(0, 1).clone();
  CHECK(ct.is_contiguous());
  CHECK(ct.to_vector() == V{1, 30, 2, 4});

  Tensor ci = Tensor::from_ints({4, 5}, {2}).clone();
  CHECK(ci.dtype() == nl::DType::I32);
  CHECK(ci.to_ints() == std::vector<int32_t>{4, 5});
}

TEST_CASE("tensor element access at set item to_vector", "[tensor]") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(a.at({1, 1}) == 5);
  CHECK(a.at({-1, -1}) == 6);
  CHECK(a.at({0, -3}) == 1);
  a.set({-2, 2}, 30);  // (0, 2)
  CHECK(a.to_vector() == V{1, 2, 30, 4, 5, 6});
  CHECK(a.at({0, 2}) == 30);

  CHECK(Tensor::from_vector({9}, {1, 1}).item() == 9);
  CHECK(a.slice(1, 2, 3).slice(0, 1, 2).item() == 6);
  CHECK(Tensor::from_ints({-4}, {1}).item() == -4.0f);

  Tensor ints = Tensor::zeros({2}, nl::DType::I32);
  ints.set({1}, 7);
  CHECK(ints.to_ints() == std::vector<int32_t>{0, 7});

  // to_vector of a strided view gives the logical row-major order
  CHECK(a.transpose(0, 1).to_vector() == V{1, 4, 2, 5, 30, 6});
}

TEST_CASE("tensor fill_ through a strided view", "[tensor]") {
  Tensor a = Tensor::zeros({3, 3});
  a.slice(1, 0, 3, 2).fill_(1);  // columns 0 and 2
  CHECK(a.to_vector() == V{1, 0, 1, 1, 0, 1, 1, 0, 1});
  Tensor i = Tensor::zeros({4}, nl::DType::I32);
  i.slice(0, 1, 4, 2).fill_(3);
  CHECK(i.to_ints() == std::vector<int32_t>{0, 3, 0, 3});
}

TEST_CASE("tensor printing names numbers and shape", "[tensor]") {
  Tensor a = Tensor::from_vector({1, 2.5f, -3, 4}, {2, 2});
  std::string s = a.to_string();
  CHECK_THAT(s, Catch::Contains("2.5"));
  CHECK_THAT(s, Catch::Contains("-3"));
  CHECK_THAT(s, Catch::Contains("4"));
  CHECK_THAT(s, Catch::Contains("(2, 2)"));
  std::ostringstream os;
  os << a;
  CHECK(os.str() == s);

  // a transposed view prints in logical order: [[1, -3], [2.5, 4]]
  std::string t = a.transpose(0, 1).to_string();
  CHECK(t.find("-3") < t.find("2.5"));

  // long dims are elided in the middle
  std::string l = Tensor::arange(10).to_string(6);
  CHECK_THAT(l, Catch::Contains("..."));
  CHECK_THAT(l, Catch::Contains("9"));
  CHECK_THAT(l, Catch::Contains("(10,)"));
  CHECK(l.find("5") == std::string::npos);

  CHECK_THAT(Tensor().to_string(), Catch::Contains("undefined"));
}

TEST_CASE("tensor copy_from between non-contiguous views", "[tensor]") {
  // dst: columns 0 and 2 of a 2x3 zero matrix, shape (2, 2), strides (3, 2)
  // src: transpose of [[1 2], [3 4]], i.e. [[1 3], [2 4]], strides (1, 2)
  Tensor big = Tensor::zeros({2, 3});
  Tensor dst = big.slice(1, 0, 3, 2);
  Tensor src = Tensor::from_vector({1, 2, 3, 4}, {2, 2}).transpose(0, 1);
  dst.copy_from(src);
  CHECK(big.to_vector() == V{1, 0, 3, 2, 0, 4});

  // broadcast source (stride 0) into a transposed destination
  Tensor m = Tensor::zeros({2, 3});
  Tensor mt = m.transpose(0, 1);  // (3, 2)
  mt.copy_from(Tensor::from_vector({5, 6}, {2}).expand({3, 2}));
  // mt[i][j] = (5, 6)[j], so m[j][i] = 5 for row 0 and 6 for row 1
  CHECK(m.to_vector() == V{5, 5, 5, 6, 6, 6});

  // 0-dim copy
  Tensor s = Tensor::scalar(0);
  s.copy_from(Tensor::scalar(8));
  CHECK(s.item() == 8);
}
