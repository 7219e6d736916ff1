import CZstd

/// A zstd-compressed file read as a stream through libzstd: compressed bytes read from the file in
/// chunks and decompressed into the caller's buffer, never the whole file. Frames one after another
/// (what `cat a.zst b.zst` or `zstd` on a long input makes) read as one stream, as `zstd -d`
/// reads them. The decoder's window is bounded (`maxWindowLog`), so a hostile frame header cannot
/// make it allocate more than that.
final class ZstdStream: DecompressionStream {
    private let stream: OpaquePointer?
    private let input: UnsafeMutableRawBufferPointer
    private var inputStart = 0
    private var inputEnd = 0
    /// The compressed bytes read from the file so far.
    private var bytesRead: Int64 = 0
    private var inputEnded = false
    /// The last frame ended (or none started): the stream may end here.
    private var frameEnded = true

    static let inputSize = 1 << 16
    /// The largest window a frame may ask for: 2^27 bytes (128 MiB), zstd's default limit for
    /// decoding without `--long`; a frame asking for more is refused, not allocated.
    static let maxWindowLog: Int32 = 27

    init(first: UnsafeRawBufferPointer, ended: Bool) {
        stream = ZSTD_createDStream()
        if let stream { ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, Self.maxWindowLog) }
        input = .allocate(byteCount: Swift.max(Self.inputSize, first.count), alignment: 8)
        if first.count > 0 { input.baseAddress!.copyMemory(from: first.baseAddress!, byteCount: first.count) }
        inputEnd = first.count
        bytesRead = Int64(first.count)
        inputEnded = ended
    }

    deinit {
        if let stream { ZSTD_freeDStream(stream) }
        input.deallocate()
    }

    var position: Int64 { bytesRead - Int64(inputEnd - inputStart) }

    func read(into out: UnsafeMutableRawBufferPointer,
              from read: (UnsafeMutableRawBufferPointer) throws(ReplayError) -> Int) throws(ReplayError) -> Int {
        guard let stream else { throw ReplayError("libzstd could not start reading the zstd data (out of memory)") }
        var output = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
        while output.pos == 0 {
            if inputStart == inputEnd {
                if !inputEnded {
                    let n = try read(input)
                    bytesRead += Int64(n)
                    inputStart = 0
                    inputEnd = n
                    if n == 0 { inputEnded = true }
                }
                if inputStart == inputEnd {
                    if frameEnded { return 0 }
                    throw ReplayError("the zstd data ends early (the file is cut short)")
                }
            }
            var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: inputEnd, pos: inputStart)
            let result = ZSTD_decompressStream(stream, &output, &inBuffer)
            inputStart = inBuffer.pos
            if ZSTD_isError(result) != 0 {
                throw ReplayError("the zstd data is damaged (\(String(cString: ZSTD_getErrorName(result))))")
            }
            // 0: a frame was fully decoded and flushed; the next byte, if any, starts another.
            frameEnded = result == 0
        }
        return output.pos
    }
}

/// The decompression of a compressed trace (gzip or zstd), read chunk by chunk.
protocol DecompressionStream: AnyObject {
    /// The compressed bytes consumed so far (for progress against the file's size).
    var position: Int64 { get }
    /// Decompresses into `out`: the bytes written, 0 at the end of the data.
    /// - Parameter read: reads compressed bytes from the file into a buffer; 0 at its end.
    /// - Throws: the problem, as a message, when the data is damaged or cut short.
    func read(into out: UnsafeMutableRawBufferPointer,
              from read: (UnsafeMutableRawBufferPointer) throws(ReplayError) -> Int) throws(ReplayError) -> Int
}
