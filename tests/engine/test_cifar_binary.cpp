// CIFAR-10 / CIFAR-100 binary reader on small generated files: labels, the channel-major pixel
// layout, several files in order, and the errors for truncated, empty and missing files.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "data/cifar_binary.h"
#include "test_helpers.h"

using liftlab::DataError;
using liftlab::test::TempDir;

namespace {

constexpr int kPlane = 32 * 32;
constexpr int kImageBytes = 3 * kPlane;

using liftlab::test::Bytes;

// Known pixel value of record r (counted across files), channel c, row y, column x.
uint8_t pixel(int r, int c, int y, int x) {
    return static_cast<uint8_t>(11 * r + 50 * c + 7 * y + x);
}

// Records first_record .. first_record + n − 1; their label bytes are `labels(r)`.
template <typename Labels>
Bytes records(int first_record, int n, Labels labels) {
    Bytes out;
    for (int r = first_record; r < first_record + n; ++r) {
        for (uint8_t l : labels(r)) out.push_back(l);
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < 32; ++y)
                for (int x = 0; x < 32; ++x) out.push_back(pixel(r, c, y, x));
    }
    return out;
}

std::string write_file(const std::string& path, const Bytes& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::vector<uint8_t> cifar10_label(int r) {
    return {static_cast<uint8_t>(r % 10)};
}
// CIFAR-100: coarse r mod 20, fine (3 r + 1) mod 100.
std::vector<uint8_t> cifar100_labels(int r) {
    return {static_cast<uint8_t>(r % 20), static_cast<uint8_t>((3 * r + 1) % 100)};
}

using liftlab::test::data_error;
using liftlab::test::has;
using liftlab::test::values;

}  // namespace

TEST(CifarBinary, ReadsCifar10RecordsInFileOrder) {
    TempDir dir;
    const auto a = write_file(dir.file("data_batch_1.bin"), records(0, 3, cifar10_label));
    const auto b = write_file(dir.file("data_batch_2.bin"), records(3, 2, cifar10_label));
    const auto d = liftlab::read_cifar_binary({a, b}, /*label_bytes=*/1, /*label_index=*/0);
    EXPECT_EQ(d.images.sizes(), (std::vector<int64_t>{5, 3, 32, 32}));
    EXPECT_EQ(d.images.scalar_type(), torch::kFloat32);
    EXPECT_EQ(d.labels.scalar_type(), torch::kInt64);
    EXPECT_EQ(values(d.labels), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(d.num_classes, 10);

    // Pixel (c=1, y=2, x=3) of record 1 is byte 1 + 1024 + 2·32 + 3 of that record:
    // 11 + 50 + 14 + 3 = 78.
    EXPECT_EQ(d.images[1][1][2][3].item<float>(), 78.0f / 255.0f);
    // Every pixel, across both files.
    auto want = torch::empty({5, 3, 32, 32}, torch::kFloat32);
    auto w = want.accessor<float, 4>();
    for (int r = 0; r < 5; ++r)
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < 32; ++y)
                for (int x = 0; x < 32; ++x) w[r][c][y][x] = pixel(r, c, y, x) / 255.0f;
    EXPECT_TRUE(torch::equal(d.images, want));
}

TEST(CifarBinary, ReadsCifar100CoarseOrFineLabels) {
    TempDir dir;
    const auto f = write_file(dir.file("train.bin"), records(0, 4, cifar100_labels));
    const auto fine = liftlab::read_cifar_binary({f}, /*label_bytes=*/2, /*label_index=*/1);
    EXPECT_EQ(values(fine.labels), (std::vector<int64_t>{1, 4, 7, 10}));
    EXPECT_EQ(fine.num_classes, 100);
    // The image starts after both label bytes: pixel (c=2, y=31, x=31) of record 3 is
    // 33 + 100 + 217 + 31 = 381 ≡ 125 (mod 256).
    EXPECT_EQ(fine.images[3][2][31][31].item<float>(), 125.0f / 255.0f);
    const auto coarse = liftlab::read_cifar_binary({f}, /*label_bytes=*/2, /*label_index=*/0);
    EXPECT_EQ(values(coarse.labels), (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(coarse.num_classes, 20);
    EXPECT_TRUE(torch::equal(fine.images, coarse.images));
}

TEST(CifarBinary, LabelBeyondTheClassCountIsNamedWithItsRecord) {
    // A label byte of 12 (or 255) in a CIFAR-10 file is corrupt data, not a 13-class problem.
    TempDir dir;
    const auto f = write_file(dir.file("custom.bin"), records(0, 3, [](int r) {
                                  return Bytes{static_cast<uint8_t>(r == 1 ? 12 : r)};
                              }));
    const auto e = liftlab::test::data_error([&] { liftlab::read_cifar_binary({f}, 1, 0); });
    EXPECT_EQ(e.file(), f);
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("record 2 has label 12, outside 0..9"), std::string::npos)
        << e.what();
    // CIFAR-100 coarse labels stop at 19.
    const auto g = write_file(dir.file("c100.bin"), records(0, 2, [](int r) {
                                  return Bytes{static_cast<uint8_t>(r == 0 ? 3 : 20), 50};
                              }));
    EXPECT_EQ(liftlab::test::data_error([&] { liftlab::read_cifar_binary({g}, 2, 0); }).line(), 2);
    EXPECT_EQ(liftlab::read_cifar_binary({g}, 2, 1).num_classes, 100);
}

TEST(CifarBinary, TruncatedRecordIsNamedWithItsNumber) {
    TempDir dir;
    Bytes bytes = records(0, 3, cifar10_label);
    bytes.resize(bytes.size() - 1000);  // record 3 keeps 2073 of its 3073 bytes
    const auto f = write_file(dir.file("cut.bin"), bytes);
    const auto e = data_error([&] { liftlab::read_cifar_binary({f}, 1, 0); });
    EXPECT_EQ(e.file(), f);
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(has(e.what(), "record 3 is truncated")) << e.what();
    EXPECT_TRUE(has(e.what(), "record size 3073")) << e.what();
    EXPECT_TRUE(has(e.what(), "only 2073 bytes")) << e.what();
}

TEST(CifarBinary, WrongLabelByteCountGetsAHint) {
    TempDir dir;
    const auto f = write_file(dir.file("c100.bin"), records(0, 2, cifar100_labels));
    const auto e = data_error([&] { liftlab::read_cifar_binary({f}, 1, 0); });
    EXPECT_TRUE(has(e.what(), "fits records with 2 label byte(s)")) << e.what();
}

TEST(CifarBinary, EmptyAndMissingFilesAreNamed) {
    TempDir dir;
    const auto empty = write_file(dir.file("empty.bin"), {});
    const auto e = data_error([&] { liftlab::read_cifar_binary({empty}, 1, 0); });
    EXPECT_EQ(e.file(), empty);
    EXPECT_TRUE(has(e.what(), "file is empty")) << e.what();
    const auto missing = dir.file("missing.bin");
    const auto m = data_error([&] { liftlab::read_cifar_binary({missing}, 2, 1); });
    EXPECT_EQ(m.file(), missing);
    EXPECT_TRUE(has(m.what(), "file not found")) << m.what();
}

TEST(CifarBinary, BadArgumentsAreRejected) {
    EXPECT_THROW(liftlab::read_cifar_binary({"x.bin"}, 3, 0), std::invalid_argument);
    EXPECT_THROW(liftlab::read_cifar_binary({"x.bin"}, 1, 1), std::invalid_argument);
    EXPECT_THROW(liftlab::read_cifar_binary({}, 1, 0), std::invalid_argument);
}
