// The keyed tensor cache (run/tensor_cache.h) in the engine's own state format: a round trip,
// misses on another key or count, and damaged files — an old torch::save archive, truncations,
// flipped bytes — that are a miss (the caller regenerates), never a crash or an exception.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "run/tensor_cache.h"
#include "test_helpers.h"

using liftlab::load_keyed_tensors;
using liftlab::store_keyed_tensors;

namespace {

std::vector<torch::Tensor> cache_sample_tensors() {
    return {torch::arange(6, torch::kFloat32).reshape({2, 3}) / 7.0f,
            torch::tensor(0.125, torch::kFloat64), torch::tensor({3, -1, 9}, torch::kInt64)};
}

std::string cache_file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void cache_write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST(TensorCache, RoundTripInTheStateFormat) {
    liftlab::test::TempDir dir;
    const std::string path = dir.str() + "/sub/cache-1.pt";
    const auto stored = cache_sample_tensors();
    store_keyed_tensors(path, "key v1 n=6", stored);
    ASSERT_TRUE(std::filesystem::exists(path));
    // The engine's own format (run/state_archive.h), not a LibTorch zip archive.
    EXPECT_EQ(cache_file_bytes(path).rfind("LIFTLAB-STATE 1\n", 0), 0u);
    const auto loaded = load_keyed_tensors(path, "key v1 n=6", stored.size());
    ASSERT_TRUE(loaded.has_value());
    ASSERT_EQ(loaded->size(), stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
        EXPECT_EQ((*loaded)[i].scalar_type(), stored[i].scalar_type()) << i;
        EXPECT_TRUE(torch::equal((*loaded)[i], stored[i])) << i;
    }
    // Another key (a hash collision, a changed recipe) or count is a miss.
    EXPECT_FALSE(load_keyed_tensors(path, "key v2 n=6", stored.size()).has_value());
    EXPECT_FALSE(load_keyed_tensors(path, "key v1 n=6", stored.size() + 1).has_value());
    EXPECT_FALSE(load_keyed_tensors(dir.str() + "/absent.pt", "key v1 n=6", 3).has_value());
}

TEST(TensorCache, DamagedFilesAreAMissNeverACrash) {
    liftlab::test::TempDir dir;
    const std::string path = dir.str() + "/cache.pt";
    const auto stored = cache_sample_tensors();
    const std::string key = "damage test";

    // A cache of the previous format: torch::save of {key as uint8, tensors…}.
    {
        auto k = torch::empty({static_cast<int64_t>(key.size())}, torch::kUInt8);
        std::copy(key.begin(), key.end(), k.data_ptr<uint8_t>());
        std::vector<torch::Tensor> old = {k};
        old.insert(old.end(), stored.begin(), stored.end());
        torch::save(old, path);
        EXPECT_FALSE(load_keyed_tensors(path, key, stored.size()).has_value());
    }

    store_keyed_tensors(path, key, stored);
    const std::string good = cache_file_bytes(path);
    ASSERT_TRUE(load_keyed_tensors(path, key, stored.size()).has_value());

    // Every truncation: a miss.
    for (size_t len = 0; len < good.size(); len += (len < 64 ? 1 : 7)) {
        cache_write_bytes(path, good.substr(0, len));
        EXPECT_FALSE(load_keyed_tensors(path, key, stored.size()).has_value()) << len;
    }
    // Garbage and a huge claimed index length: a miss.
    cache_write_bytes(path, "not a cache file at all");
    EXPECT_FALSE(load_keyed_tensors(path, key, stored.size()).has_value());
    cache_write_bytes(path, "LIFTLAB-STATE 1\n99999999999999999999\n{}");
    EXPECT_FALSE(load_keyed_tensors(path, key, stored.size()).has_value());

    // Flipped bytes anywhere (seeded): a miss, or (a flip inside the raw tensor bytes) the right
    // number of tensors of the stored shapes — never an exception or a crash.
    std::mt19937 rng(38);
    std::uniform_int_distribution<size_t> where(0, good.size() - 1);
    std::uniform_int_distribution<int> bit(0, 7);
    int misses = 0;
    for (int trial = 0; trial < 300; ++trial) {
        std::string bad = good;
        bad[where(rng)] ^= static_cast<char>(1 << bit(rng));
        cache_write_bytes(path, bad);
        std::optional<std::vector<torch::Tensor>> got;
        EXPECT_NO_THROW(got = load_keyed_tensors(path, key, stored.size())) << trial;
        if (!got) {
            ++misses;
            continue;
        }
        ASSERT_EQ(got->size(), stored.size()) << trial;
        for (size_t i = 0; i < stored.size(); ++i)
            EXPECT_EQ((*got)[i].sizes(), stored[i].sizes()) << trial << " tensor " << i;
    }
    EXPECT_GT(misses, 100);  // most of the file is header and index: most flips must be caught

    // The caller regenerates and stores again: the file is whole once more.
    store_keyed_tensors(path, key, stored);
    EXPECT_TRUE(load_keyed_tensors(path, key, stored.size()).has_value());
}

TEST(TensorCache, UnwritableFolderIsNotAnError) {
    liftlab::test::TempDir dir;
    const std::string blocker = dir.str() + "/file";
    cache_write_bytes(blocker, "x");  // a file where the folder would go
    EXPECT_NO_THROW(store_keyed_tensors(blocker + "/cache.pt", "k", cache_sample_tensors()));
    EXPECT_FALSE(std::filesystem::exists(blocker + "/cache.pt"));
}
