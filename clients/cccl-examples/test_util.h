// A stand-in for CUB's cub/test/test_util.h, written for cumock: CUB's examples include
// "../../test/test_util.h", whose current version pulls in the c2h test library and Catch2
// (fetched by CCCL's CMake, not shipped with the toolkit), and whose older versions no
// longer compile against CUDA 13 (cudaDeviceProp::memoryClockRate is gone). This header
// gives the examples the few helpers they call, with the same names and meanings:
// command-line flags, device set-up, random bits, result comparison and a GPU timer.
// ci/cccl-examples.sh puts it at cub/test/test_util.h beside a copy of the examples.
#pragma once

#include <cub/util_allocator.cuh>
#include <cub/util_debug.cuh>
#include <cub/util_device.cuh>
#include <cub/util_type.cuh>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#define AssertEquals(a, b)                                                                         \
  if ((a) != (b))                                                                                  \
  {                                                                                                \
    std::cerr << "\n" << __FILE__ << ": " << __LINE__ << ": AssertEquals(" #a ", " #b ") failed.\n"; \
    exit(1);                                                                                       \
  }

#define AssertTrue(a)                                                                    \
  if (!(a))                                                                              \
  {                                                                                      \
    std::cerr << "\n" << __FILE__ << ": " << __LINE__ << ": AssertTrue(" #a ") failed.\n"; \
    exit(1);                                                                             \
  }

// `--name` flags and `--name=value` arguments, as CUB's examples read them.
struct CommandLineArgs
{
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::vector<std::string> args;
  cudaDeviceProp deviceProp{};
  std::size_t device_free_physmem  = 0;
  std::size_t device_total_physmem = 0;

  CommandLineArgs(int argc, char** argv)
  {
    for (int i = 1; i < argc; i++)
    {
      std::string arg = argv[i];
      if (arg.size() < 2 || arg[0] != '-' || arg[1] != '-')
      {
        args.push_back(arg);
        continue;
      }
      auto eq = arg.find('=');
      keys.push_back(arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
      values.push_back(eq == std::string::npos ? std::string() : arg.substr(eq + 1));
    }
  }

  bool CheckCmdLineFlag(const char* name) const
  {
    for (const auto& key : keys)
    {
      if (key == name)
      {
        return true;
      }
    }
    return false;
  }

  template <typename T>
  void GetCmdLineArgument(const char* name, T& val) const
  {
    for (std::size_t i = 0; i < keys.size(); ++i)
    {
      if (keys[i] == name)
      {
        std::istringstream in(values[i]);
        in >> val;
      }
    }
  }

  int ParsedArgc() const
  {
    return (int) keys.size();
  }

  cudaError_t DeviceInit(int dev = -1)
  {
    int count = 0;
    cudaError_t error = CubDebug(cudaGetDeviceCount(&count));
    if (error != cudaSuccess)
    {
      return error;
    }
    if (count == 0)
    {
      fprintf(stderr, "No devices supporting CUDA.\n");
      exit(1);
    }
    if (dev < 0)
    {
      GetCmdLineArgument("device", dev);
    }
    if (dev < 0 || dev >= count)
    {
      dev = 0;
    }
    if ((error = CubDebug(cudaSetDevice(dev))) != cudaSuccess)
    {
      return error;
    }
    if ((error = CubDebug(cudaMemGetInfo(&device_free_physmem, &device_total_physmem))) != cudaSuccess)
    {
      return error;
    }
    int ptx_version = 0;
    if ((error = CubDebug(cub::PtxVersion(ptx_version))) != cudaSuccess)
    {
      return error;
    }
    if ((error = CubDebug(cudaGetDeviceProperties(&deviceProp, dev))) != cudaSuccess)
    {
      return error;
    }
    if (!CheckCmdLineFlag("quiet"))
    {
      printf("Using device %d: %s (PTX version %d, SM%d, %d SMs, %llu free / %llu total MB physmem)\n",
             dev,
             deviceProp.name,
             ptx_version,
             deviceProp.major * 100 + deviceProp.minor * 10,
             deviceProp.multiProcessorCount,
             (unsigned long long) device_free_physmem / 1024 / 1024,
             (unsigned long long) device_total_physmem / 1024 / 1024);
      fflush(stdout);
    }
    return cudaSuccess;
  }
};

// A fixed-seed xorshift generator: the examples compute their references from the same
// bits they upload, so any reproducible source of bits does.
inline unsigned int test_util_random_word()
{
  static std::uint64_t state = 0x9e3779b97f4a7c15ull;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (unsigned int) (state >> 32);
}

template <typename T>
bool test_util_is_nan(const T& value)
{
  if constexpr (std::is_floating_point_v<T>)
  {
    return std::isnan(value);
  }
  else
  {
    return false;
  }
}

// Random bits in [begin_bit, end_bit) of `key`; each extra level of entropy reduction
// ANDs in another random word (fewer ones, more repeated keys), -1 gives zero.
template <typename K>
void RandomBits(K& key, int entropy_reduction = 0, int begin_bit = 0, int end_bit = sizeof(K) * 8)
{
  constexpr int words = (sizeof(K) + sizeof(unsigned int) - 1) / sizeof(unsigned int);
  if (entropy_reduction == -1)
  {
    memset((void*) &key, 0, sizeof(key));
    return;
  }
  if (end_bit < 0)
  {
    end_bit = sizeof(K) * 8;
  }
  do
  {
    unsigned int buffer[words];
    for (int j = 0; j < words; j++)
    {
      const int low = j * 32;
      unsigned int word = 0xffffffffu;
      if (begin_bit > low)
      {
        word = begin_bit - low >= 32 ? 0 : word & (0xffffffffu << (begin_bit - low));
      }
      if (low + 32 > end_bit)
      {
        word = low + 32 - end_bit >= 32 ? 0 : word & (0xffffffffu >> (low + 32 - end_bit));
      }
      for (int i = 0; i <= entropy_reduction; i++)
      {
        word &= test_util_random_word();
      }
      buffer[j] = word;
    }
    memcpy((void*) &key, buffer, sizeof(K));
  } while (test_util_is_nan(key));
}

template <typename T>
T RandomValue(T max)
{
  unsigned int bits;
  do
  {
    RandomBits(bits);
  } while (bits == 0xffffffffu);
  return (T) ((double(bits) / double(0xffffffffu)) * double(max));
}

template <typename T>
void DisplayResults(T* h_data, std::size_t num_items)
{
  for (std::size_t i = 0; i < num_items; i++)
  {
    std::cout << (i ? ", " : "") << h_data[i];
  }
  printf("\n");
}

template <typename T>
void DisplayDeviceResults(T* d_data, std::size_t num_items)
{
  std::vector<T> h_data(num_items);
  CubDebugExit(cudaMemcpy(h_data.data(), d_data, sizeof(T) * num_items, cudaMemcpyDeviceToHost));
  DisplayResults(h_data.data(), num_items);
}

// 0 when equal; otherwise prints the first mismatch and returns 1, as CUB's helper does.
// Floating-point values compare with a relative tolerance of 1e-5 like the original.
template <typename S, typename T, typename OffsetT>
int CompareResults(T* computed, S* reference, OffsetT len, bool verbose = true)
{
  for (OffsetT i = 0; i < len; i++)
  {
    bool equal;
    if constexpr (std::is_floating_point_v<T>)
    {
      const double c = computed[i], r = reference[i];
      equal = c == r || std::fabs(r) > 0 && std::fabs((c - r) / r) <= 1e-5;
    }
    else
    {
      equal = computed[i] == reference[i];
    }
    if (!equal)
    {
      if (verbose)
      {
        std::cout << "INCORRECT: [" << i << "]: " << computed[i] << " != " << reference[i];
      }
      return 1;
    }
  }
  if (verbose)
  {
    printf("CORRECT");
  }
  return 0;
}

template <typename S, typename T>
int CompareDeviceResults(S* h_reference, T* d_data, std::size_t num_items, bool verbose = true, bool display_data = false)
{
  if (num_items == 0)
  {
    return 0;
  }
  std::vector<T> h_data(num_items);
  CubDebugExit(cudaMemcpy(h_data.data(), d_data, sizeof(T) * num_items, cudaMemcpyDeviceToHost));
  if (display_data)
  {
    printf("Reference:\n");
    DisplayResults(h_reference, num_items);
    printf("\n\nComputed:\n");
    DisplayResults(h_data.data(), num_items);
    printf("\n\n");
  }
  return CompareResults(h_data.data(), h_reference, num_items, verbose);
}

// Events on the legacy default stream around a region, as the examples time kernels.
struct GpuTimer
{
  cudaEvent_t start_event;
  cudaEvent_t stop_event;

  GpuTimer()
  {
    CubDebugExit(cudaEventCreate(&start_event));
    CubDebugExit(cudaEventCreate(&stop_event));
  }

  ~GpuTimer()
  {
    cudaEventDestroy(start_event);
    cudaEventDestroy(stop_event);
  }

  void Start()
  {
    CubDebugExit(cudaEventRecord(start_event, 0));
  }

  void Stop()
  {
    CubDebugExit(cudaEventRecord(stop_event, 0));
  }

  float ElapsedMillis()
  {
    float elapsed = 0;
    CubDebugExit(cudaEventSynchronize(stop_event));
    CubDebugExit(cudaEventElapsedTime(&elapsed, start_event, stop_event));
    return elapsed;
  }
};
