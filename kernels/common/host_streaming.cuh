// SPDX-License-Identifier: Apache-2.0
// Streams an array in host memory through the device in chunks (the host-array paths of
// selection, top-k, rows and noise vectors), overlapping the stages of successive chunks: the host
// copies a chunk from the caller's pageable memory into page-locked staging (pinned_staging.cuh),
// a copy stream moves it into a device buffer, and the compute stream runs the caller's pass over
// it. Two staging buffers and two device buffers alternate, ordered by events:
//
//   host:     fill staging 0 | fill staging 1 | fill staging 0 | fill staging 1 | ...
//   upload:                  | 0 -> device 0  | 1 -> device 1  | 2 -> device 0  | ...
//   compute:                                  | pass(chunk 0)  | pass(chunk 1)  | ...
//
// The host refills a staging buffer once its upload has left it (an event it waits on), and the
// upload stream refills a device buffer once the pass two chunks back has read it (an event the
// stream waits on). A device chunk larger than a staging buffer (blocks of whole rows) goes up
// in several pieces, alternating between the two staging buffers. update_each brings each chunk
// back as well: a third stream copies it into the staging buffer it came from, and the host
// copies it out into the caller's memory, while the next chunks go up and are computed.
//
// The caller's memory is read and written by the host thread alone, never by a DMA engine, so it
// is the caller's again as soon as a call returns, also after an exception; the destructor waits
// for all queued work before the staging and device buffers are released. Each pass receives its
// chunk's offset in the array and indexes candidates globally with it, so how an array is cut
// into chunks never changes a result.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "device/gpu.hpp"
#include "launch_helpers.cuh"
#include "pinned_staging.cuh"

namespace dpselect::detail {

// The device chunk of the array paths: 32 MiB per buffer, two buffers. The pass over 32 MiB takes
// about 10 us on an H100 (3 TB/s), the bus 0.6 to 1.3 ms, so the pass (with a top-k merge) hides
// under the next chunk's upload, and a call takes 64 MiB of the pool where the unpipelined path
// took one chunk of 256 to 512 MiB.
inline constexpr std::uint64_t kDefaultStreamingChunkBytes = std::uint64_t{32} << 20;

// The chunk bytes of a path (`path_default` unless a test set others with
// set_host_streaming_bytes_for_testing) and of a staging piece (kStagingBufferBytes unless a test
// set fewer). kernels/common/host_streaming.cu.
std::uint64_t streaming_chunk_bytes(std::uint64_t path_default);
std::uint64_t streaming_piece_bytes();

// A CUDA event used for ordering only (no timing).
class OwnedEvent {
 public:
  OwnedEvent() { DPSELECT_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  ~OwnedEvent() { static_cast<void>(cudaEventDestroy(event_)); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

enum class StreamingDirection {
  to_device,   // upload_each: chunks go to the device only
  round_trip,  // update_each: each chunk comes back after its pass (granule 1)
};

template <class T>
class HostStreaming {
 public:
  // `count` elements in chunks of whole `granule`s (a granule is a row of a matrix; at least one
  // per chunk), of up to `chunk_bytes` each, or fewer while the device cannot hold two such
  // buffers (DeviceChunk). A round trip's chunks are at most one staging buffer. One chunk, or no
  // page-locked memory to be had, runs without a pipeline: pageable copies on the compute stream.
  HostStreaming(std::uint64_t count, std::uint64_t granule, std::uint64_t chunk_bytes, StreamingDirection direction,
                const char* what)
      : count_(count) {
    const std::uint64_t piece_bytes = streaming_piece_bytes();
    piece_elements_ = std::max<std::uint64_t>(1, piece_bytes / sizeof(T));
    if (direction == StreamingDirection::round_trip) chunk_bytes = std::min(chunk_bytes, piece_bytes);
    const std::uint64_t granules = std::max<std::uint64_t>(1, chunk_bytes / sizeof(T) / granule);
    const std::uint64_t wanted = std::min(granules * granule, std::max(count, granule));
    if (wanted < count) {
      pipeline_.emplace();
      if (pipeline_->staging.empty()) pipeline_.reset();
    }
    device_.emplace(wanted, compute_.get(), what, granule, pipeline_ ? 2u : 1u);
    if (pipeline_) {
      // The buffers are the pool's in the compute stream's order; the copy streams may touch them
      // only after that point (the pool may hand out memory whose last user has yet to finish).
      DPSELECT_CUDA_TRY(cudaEventRecord(pipeline_->allocated.get(), compute_.get()));
      DPSELECT_CUDA_TRY(cudaStreamWaitEvent(pipeline_->upload.get(), pipeline_->allocated.get(), 0));
      DPSELECT_CUDA_TRY(cudaStreamWaitEvent(pipeline_->download.get(), pipeline_->allocated.get(), 0));
    }
  }
  HostStreaming(const HostStreaming&) = delete;
  HostStreaming& operator=(const HostStreaming&) = delete;
  // After an exception, copies and passes may still be queued: they finish before the buffers go
  // back to the pool and the staging cache (the members' destructors, after this body).
  ~HostStreaming() {
    if (pipeline_) {
      static_cast<void>(cudaStreamSynchronize(pipeline_->upload.get()));
      static_cast<void>(cudaStreamSynchronize(pipeline_->download.get()));
    }
    static_cast<void>(cudaStreamSynchronize(compute_.get()));
  }

  // The stream the passes run on; the caller queues its own work around them there.
  cudaStream_t compute_stream() const { return compute_.get(); }
  // Elements of a full chunk (the last may hold fewer); what a pass's launch is sized for.
  std::uint64_t chunk_elements() const { return device_->elements(); }

  // Copies host[0, count) to the device chunk by chunk and calls pass(chunk, offset, elements)
  // for each, in order: chunk holds host[offset, offset + elements) in device memory. The pass
  // queues its work on compute_stream() (it may also synchronize it); the call returns when the
  // last pass has been queued.
  template <class Pass>
  void upload_each(const T* host, Pass&& pass) {
    const std::uint64_t chunks = chunk_count();
    if (!pipeline_) {
      T* const device = device_->buffer(0);
      for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
        // From pageable memory the copy returns once it has left the caller's buffer.
        DPSELECT_CUDA_TRY(cudaMemcpyAsync(device, host + first_element(chunk), chunk_size(chunk) * sizeof(T),
                                          cudaMemcpyHostToDevice, compute_.get()));
        pass(static_cast<const T*>(device), first_element(chunk), chunk_size(chunk));
      }
      return;
    }
    // The next chunk is queued for upload before this one's pass, so a pass that synchronizes
    // (rows) still overlaps the upload of the next.
    if (chunks > 0) send(host, 0);
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (chunk + 1 < chunks) send(host, chunk + 1);
      run_pass(chunk, pass);
    }
  }

  // As upload_each, and after each pass copies the chunk (which the pass updated in place) back
  // to host[offset, offset + elements). The call returns when every chunk is back.
  template <class Pass>
  void update_each(T* host, Pass&& pass) {
    const std::uint64_t chunks = chunk_count();
    if (!pipeline_) {
      T* const device = device_->buffer(0);
      for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
        T* const values = host + first_element(chunk);
        const std::uint64_t bytes = chunk_size(chunk) * sizeof(T);
        DPSELECT_CUDA_TRY(cudaMemcpyAsync(device, values, bytes, cudaMemcpyHostToDevice, compute_.get()));
        pass(device, first_element(chunk), chunk_size(chunk));
        // To pageable memory the copy returns once it has completed.
        DPSELECT_CUDA_TRY(cudaMemcpyAsync(values, device, bytes, cudaMemcpyDeviceToHost, compute_.get()));
      }
      return;
    }
    // Chunk i + 1 goes up while chunk i is computed and chunk i - 1 comes down; the host empties
    // a staging buffer (chunk i - 1) just before refilling it (chunk i + 1).
    if (chunks > 0) send(host, 0);
    for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
      run_pass(chunk, pass);
      bring_back(chunk);
      if (chunk + 1 < chunks) {
        if (chunk >= 1) receive(host, chunk - 1);
        send(host, chunk + 1);
      }
    }
    for (std::uint64_t chunk = chunks >= 2 ? chunks - 2 : 0; chunk < chunks; ++chunk) receive(host, chunk);
  }

 private:
  struct Pipeline {
    OwnedStream upload;
    OwnedStream download;
    OwnedEvent allocated;      // the device buffers exist (compute stream)
    OwnedEvent uploaded[2];    // device buffer b holds its chunk
    OwnedEvent computed[2];    // the pass over device buffer b is done
    OwnedEvent piece_sent[2];  // staging buffer b's upload has read it
    OwnedEvent downloaded[2];  // staging buffer b holds its chunk's result
    PinnedStaging staging;
  };

  std::uint64_t chunk_count() const { return (count_ + chunk_elements() - 1) / chunk_elements(); }
  std::uint64_t first_element(std::uint64_t chunk) const { return chunk * chunk_elements(); }
  std::uint64_t chunk_size(std::uint64_t chunk) const {
    return std::min(chunk_elements(), count_ - first_element(chunk));
  }

  // Queues the upload of `chunk` into device buffer chunk % 2, piece by piece through the staging
  // buffers; the host fills each piece's staging buffer once its previous upload has left it.
  void send(const T* host, std::uint64_t chunk) {
    Pipeline& pipeline = *pipeline_;
    const unsigned int slot = static_cast<unsigned int>(chunk % 2);
    T* const device = device_->buffer(slot);
    if (chunk >= 2) DPSELECT_CUDA_TRY(cudaStreamWaitEvent(pipeline.upload.get(), pipeline.computed[slot].get(), 0));
    const T* const source = host + first_element(chunk);
    const std::uint64_t count = chunk_size(chunk);
    for (std::uint64_t done = 0; done < count; done += piece_elements_) {
      const std::uint64_t piece = std::min(piece_elements_, count - done);
      const unsigned int buffer = static_cast<unsigned int>(pieces_sent_ % 2);
      if (pieces_sent_ >= 2) DPSELECT_CUDA_TRY(cudaEventSynchronize(pipeline.piece_sent[buffer].get()));
      copy_host_memory(pipeline.staging.buffer(buffer), source + done, piece * sizeof(T));
      DPSELECT_CUDA_TRY(cudaMemcpyAsync(device + done, pipeline.staging.buffer(buffer), piece * sizeof(T),
                                        cudaMemcpyHostToDevice, pipeline.upload.get()));
      DPSELECT_CUDA_TRY(cudaEventRecord(pipeline.piece_sent[buffer].get(), pipeline.upload.get()));
      ++pieces_sent_;
    }
    DPSELECT_CUDA_TRY(cudaEventRecord(pipeline.uploaded[slot].get(), pipeline.upload.get()));
  }

  // Queues the pass over `chunk` once its upload is complete.
  template <class Pass>
  void run_pass(std::uint64_t chunk, Pass& pass) {
    Pipeline& pipeline = *pipeline_;
    const unsigned int slot = static_cast<unsigned int>(chunk % 2);
    DPSELECT_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), pipeline.uploaded[slot].get(), 0));
    pass(device_->buffer(slot), first_element(chunk), chunk_size(chunk));
    DPSELECT_CUDA_TRY(cudaEventRecord(pipeline.computed[slot].get(), compute_.get()));
  }

  // Queues the copy of `chunk`'s result into the staging buffer it went up by (a round trip's
  // chunk is one piece, so that is buffer chunk % 2), after its pass.
  void bring_back(std::uint64_t chunk) {
    Pipeline& pipeline = *pipeline_;
    const unsigned int slot = static_cast<unsigned int>(chunk % 2);
    DPSELECT_CUDA_TRY(cudaStreamWaitEvent(pipeline.download.get(), pipeline.computed[slot].get(), 0));
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(pipeline.staging.buffer(slot), device_->buffer(slot),
                                      chunk_size(chunk) * sizeof(T), cudaMemcpyDeviceToHost, pipeline.download.get()));
    DPSELECT_CUDA_TRY(cudaEventRecord(pipeline.downloaded[slot].get(), pipeline.download.get()));
  }

  // Waits for `chunk`'s result and copies it out of staging into the caller's memory; its staging
  // and device buffers are then free for chunk + 2.
  void receive(T* host, std::uint64_t chunk) {
    Pipeline& pipeline = *pipeline_;
    const unsigned int slot = static_cast<unsigned int>(chunk % 2);
    DPSELECT_CUDA_TRY(cudaEventSynchronize(pipeline.downloaded[slot].get()));
    copy_host_memory(host + first_element(chunk), pipeline.staging.buffer(slot), chunk_size(chunk) * sizeof(T));
  }

  std::uint64_t count_;
  std::uint64_t piece_elements_ = 1;
  std::uint64_t pieces_sent_ = 0;
  // Destroyed in reverse order: the device buffers are freed on the compute stream before it goes.
  OwnedStream compute_;
  std::optional<Pipeline> pipeline_;
  std::optional<DeviceChunk<T>> device_;
};

}  // namespace dpselect::detail
