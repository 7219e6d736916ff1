import CZlib

/// A gzip-compressed file read as a stream through zlib: compressed bytes read from the file in
/// chunks and inflated into the caller's buffer, never the whole file. Members one after another
/// (what `cat a.gz b.gz` makes) read as one stream, as `gunzip` reads them, and zero bytes after a
/// member are skipped as padding (as Python's gzip skips them).
final class GzipStream: DecompressionStream {
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableRawBufferPointer
    /// The compressed bytes read from the file so far.
    private(set) var bytesRead: Int64 = 0
    /// The file has no more bytes.
    private var inputEnded = false
    /// The last member ended; another one starts at the next compressed byte, if there is one.
    private var memberEnded = false
    /// What `inflateInit2` returned (not `Z_OK` only without memory).
    private let started: Int32

    static let inputSize = 1 << 16

    /// Starts a stream whose first compressed bytes, already read from the file, are `first`
    /// (`ended`: the file ended after them).
    init(first: UnsafeRawBufferPointer, ended: Bool) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(byteCount: Swift.max(Self.inputSize, first.count), alignment: 8)
        if first.count > 0 { input.baseAddress!.copyMemory(from: first.baseAddress!, byteCount: first.count) }
        stream.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = UInt32(first.count)
        bytesRead = Int64(first.count)
        inputEnded = ended
        started = cachesh_inflate_init_gzip(stream)
    }

    deinit {
        if started == Z_OK { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        input.deallocate()
    }

    /// The compressed bytes consumed so far (for progress against the file's size).
    var position: Int64 { bytesRead - Int64(stream.pointee.avail_in) }

    /// Inflates into `out`: the bytes written, 0 at the end of the last member.
    /// - Parameter read: reads compressed bytes from the file into a buffer; 0 at its end.
    /// - Throws: the problem, as a message, when the data is not gzip, is damaged or is cut short.
    func read(into out: UnsafeMutableRawBufferPointer,
              from read: (UnsafeMutableRawBufferPointer) throws(ReplayError) -> Int) throws(ReplayError) -> Int {
        guard started == Z_OK else { throw ReplayError("zlib could not start reading the gzip data (out of memory)") }
        let s = stream
        s.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        s.pointee.avail_out = UInt32(clamping: out.count)
        let room = Int(s.pointee.avail_out)
        while Int(s.pointee.avail_out) == room {
            if s.pointee.avail_in == 0 {
                if !inputEnded {
                    let n = try read(input)
                    bytesRead += Int64(n)
                    if n == 0 { inputEnded = true }
                    s.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    s.pointee.avail_in = UInt32(n)
                }
                if s.pointee.avail_in == 0 {
                    if memberEnded { return 0 }
                    throw ReplayError("the gzip data ends early (the file is cut short)")
                }
            }
            if memberEnded {
                // Zero bytes after a member are padding (a tape's or a block device's last block):
                // a member starts with 0x1f, never 0. Skipped as Python's gzip skips them, also
                // before another member (where gunzip stops with a warning); any other byte starts
                // the next member (bytes that are not one are damage).
                while s.pointee.avail_in > 0 && s.pointee.next_in.pointee == 0 {
                    s.pointee.next_in += 1
                    s.pointee.avail_in -= 1
                }
                if s.pointee.avail_in == 0 { continue }
                inflateReset(s)
                memberEnded = false
            }
            switch inflate(s, Z_NO_FLUSH) {
            case Z_STREAM_END: memberEnded = true
            case Z_OK, Z_BUF_ERROR: break
            default:
                let why = s.pointee.msg.map { String(cString: $0) } ?? "not gzip data"
                throw ReplayError("the gzip data is damaged (\(why))")
            }
        }
        return room - Int(s.pointee.avail_out)
    }
}
