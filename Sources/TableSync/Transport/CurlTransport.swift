#if !canImport(Darwin)
import CCurl
import Foundation
import Synchronization

/// Requests over the system's libcurl, through its multi interface on one thread of its own.
///
/// The thread waits in `curl_multi_poll` (epoll) until a socket is ready, a transfer's timer is due or a new
/// request or cancellation wakes it with `curl_multi_wakeup`: nothing spins while an answer is outstanding, where
/// Foundation's `URLSession` on Linux, built on the same libcurl, wakes thousands of times a second. Callers
/// never block: each request is handed over under a short lock and awaited through a continuation, so any number
/// can be in flight (a pull's prefetched page, a push's pipelined batches), sharing libcurl's cache of kept-alive
/// connections (HTTP/1.1, or HTTP/2 over TLS).
///
/// What a system administrator sets up for curl holds here too, because libcurl reads it: `http_proxy`,
/// `https_proxy`, `all_proxy` (SOCKS included) and `no_proxy`, and `~/.netrc`. libcurl trusts the system's
/// certificate store, which the distribution's updates keep current; `CURL_CA_BUNDLE`, `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` choose another, as they do for the `curl` command (``CertificateAuthorities``).
package final class CurlTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: `multi` is used by the loop thread alone, but for `curl_multi_wakeup`, which libcurl allows from
    // any thread; everything else shared is inside `state`.

    /// The process's transport, started on first use and kept for the life of the process.
    package static let shared = CurlTransport()

    private let multi: UnsafeMutableRawPointer
    private let state = Mutex(LoopState())
    private let authorities: CertificateAuthorities

    /// Transfers handed to the loop thread, and cancellations of running ones, not yet taken by it.
    private struct LoopState {
        var queued: [Transfer] = []
        var cancelled: [Transfer] = []
    }

    private init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let multi = curl_multi_init() else {
            fatalError("libcurl could not create a multi handle (out of memory)")
        }
        self.multi = multi
        self.authorities = CertificateAuthorities(environment: environment)
        let thread = Thread { [self] in self.run() }
        thread.name = "tablesync-curl"
        thread.start()
    }

    package func exchange(_ request: TransportRequest) async throws -> TransportAnswer {
        let transfer = try Transfer(request, authorities: authorities)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                let cancelledAlready = state.withLock { state -> Bool in
                    if transfer.phase == .cancelled { return true }
                    transfer.phase = .queued
                    state.queued.append(transfer)
                    return false
                }
                if cancelledAlready { transfer.finish(.failure(CancellationError())) } else { curl_multi_wakeup(multi) }
            }
        } onCancel: {
            let outcome = state.withLock { state -> Transfer.Phase in
                let phase = transfer.phase
                switch phase {
                case .created:
                    transfer.phase = .cancelled
                case .queued:
                    transfer.phase = .cancelled
                    state.queued.removeAll { $0 === transfer }
                case .running:
                    state.cancelled.append(transfer)
                case .cancelled, .finished:
                    break
                }
                return phase
            }
            switch outcome {
            case .queued: transfer.finish(.failure(CancellationError()))
            case .running: curl_multi_wakeup(multi)
            default: break
            }
        }
    }

    // MARK: - The loop thread

    private func run() {
        var running: [UnsafeMutableRawPointer: Transfer] = [:]
        while true {
            let (started, cancelled) = state.withLock { state in
                defer {
                    state.queued = []
                    state.cancelled = []
                }
                for transfer in state.queued { transfer.phase = .running }
                return (state.queued, state.cancelled)
            }
            for transfer in started {
                let code = curl_multi_add_handle(multi, transfer.easy)
                if code == CURLM_OK {
                    running[transfer.easy] = transfer
                } else {
                    settle(
                        transfer, .failure(TransportFailure.couldNotConnect(String(cString: curl_multi_strerror(code))))
                    )
                }
            }
            for transfer in cancelled where running.removeValue(forKey: transfer.easy) != nil {
                curl_multi_remove_handle(multi, transfer.easy)
                settle(transfer, .failure(CancellationError()))
            }
            var stillRunning: Int32 = 0
            curl_multi_perform(multi, &stillRunning)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = running.removeValue(forKey: easy)
                else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                settle(transfer, transfer.outcome(code))
            }
            // Returns when a socket is ready, libcurl's next timer is due (it shortens the wait to that), or
            // `curl_multi_wakeup` is called; the 1 s bound is only a safety net.
            curl_multi_poll(multi, nil, 0, 1_000, nil)
        }
    }

    /// Ends `transfer` with `result` unless a cancellation already ended it.
    private func settle(_ transfer: Transfer, _ result: Result<TransportAnswer, any Error>) {
        let mine = state.withLock { _ -> Bool in
            guard transfer.phase == .running else { return false }
            transfer.phase = .finished
            return true
        }
        if mine { transfer.finish(result) }
    }
}

/// Where libcurl looks for the authorities that sign servers' certificates, when the environment says so: the
/// same variables, in the same order, as the `curl` command reads (libcurl itself reads none of them).
package struct CertificateAuthorities: Equatable, Sendable {
    /// A PEM file of authorities (`CURLOPT_CAINFO`); `nil` for the system's.
    package var file: String?
    /// A directory of hashed certificates (`CURLOPT_CAPATH`); `nil` for the system's.
    package var directory: String?

    /// `CURL_CA_BUNDLE` names the file and wins alone; otherwise `SSL_CERT_FILE` names the file and
    /// `SSL_CERT_DIR` the directory. Empty values count as unset.
    package init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let bundle = value("CURL_CA_BUNDLE") {
            file = bundle
        } else {
            file = value("SSL_CERT_FILE")
            directory = value("SSL_CERT_DIR")
        }
    }
}

/// One attempt of one request: the easy handle and what it owns until the answer is in.
///
/// Made on the caller's task, handed to the loop thread under the transport's lock, and from then on touched by
/// the loop thread alone (libcurl's callbacks run there); `phase` is read and written under that lock only.
private final class Transfer: @unchecked Sendable {
    enum Phase { case created, queued, running, cancelled, finished }

    let easy: UnsafeMutableRawPointer
    var phase = Phase.created
    var continuation: CheckedContinuation<TransportAnswer, any Error>?
    private let maxBodyBytes: Int
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let requestBody: UnsafeMutableBufferPointer<UInt8>
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    init(_ request: TransportRequest, authorities: CertificateAuthorities) throws {
        guard let easy = curl_easy_init() else {
            throw TransportFailure.couldNotConnect("libcurl could not create a handle")
        }
        self.easy = easy
        maxBodyBytes = request.maxBodyBytes
        requestBody = .allocate(capacity: max(request.body?.count ?? 0, 1))
        _ = requestBody.initialize(from: request.body ?? [])
        errorText.initialize(to: 0)

        // An empty `Expect:`: libcurl versions may ask servers to confirm large bodies (over 1 MiB: a big record
        // sent on its own) with `100 Continue` and wait up to a second for an answer some servers never send.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:"] {
            headerList = curl_slist_append(headerList, line)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        tablesync_curl_set_pointer(easy, CURLOPT_URL, request.url)
        tablesync_curl_set_pointer(easy, CURLOPT_HTTPHEADER, headerList)
        tablesync_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        tablesync_curl_set_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int(request.timeout * 1_000)))
        tablesync_curl_set_long(easy, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
        tablesync_curl_set_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        tablesync_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorText)
        if let file = authorities.file { tablesync_curl_set_pointer(easy, CURLOPT_CAINFO, file) }
        if let directory = authorities.directory { tablesync_curl_set_pointer(easy, CURLOPT_CAPATH, directory) }
        if request.method == "GET" {
            tablesync_curl_set_long(easy, CURLOPT_HTTPGET, 1)
        } else {
            tablesync_curl_set_pointer(easy, CURLOPT_CUSTOMREQUEST, request.method)
            if request.body != nil || request.method != "DELETE" {
                tablesync_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body?.count ?? 0))
                tablesync_curl_set_pointer(easy, CURLOPT_POSTFIELDS, requestBody.baseAddress)
            }
        }
        // A callback without its transfer takes nothing, which makes libcurl end the transfer with an error.
        tablesync_curl_set_write_function(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            guard let context else { return 0 }
            return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().receiveBody(data, size * count)
        }
        tablesync_curl_set_pointer(easy, CURLOPT_WRITEDATA, context)
        tablesync_curl_set_write_function(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            guard let context else { return 0 }
            return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().receiveHeader(data, size * count)
        }
        tablesync_curl_set_pointer(easy, CURLOPT_HEADERDATA, context)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        requestBody.deallocate()
        errorText.deallocate()
    }

    /// Resumes the waiting task; called once, by whoever moved `phase` to its end.
    func finish(_ result: Result<TransportAnswer, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ length: Int) -> Int {
        guard body.count + length <= maxBodyBytes else {
            bodyTooLarge = true
            return 0
        }
        if let data { body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
        return length
    }

    /// One header line; a status line starts a new answer (after `100 Continue`, or a redirect's headers).
    private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ length: Int) -> Int {
        guard let data else { return length }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers = [:]
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
            // The body's room at once, not by doubling (a page arrives in many reads).
            if name == "content-length", let length = Int(value), length > 0 {
                body.reserveCapacity(min(length, maxBodyBytes))
            }
        }
        return length
    }

    /// What the finished transfer comes to: its answer, or why there is none.
    func outcome(_ code: CURLcode) -> Result<TransportAnswer, any Error> {
        guard code == CURLE_OK else { return .failure(failure(code)) }
        var status = 0
        tablesync_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .success(TransportAnswer(status: status, headers: headers, body: body))
    }

    private func failure(_ code: CURLcode) -> TransportFailure {
        if bodyTooLarge { return .tooLarge }
        let detail = (errorText.pointee != 0 ? String(cString: errorText) : String(cString: curl_easy_strerror(code)))
            .trimmingWhitespace()
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .unknownHost
        case CURLE_COULDNT_CONNECT:
            var number = 0
            tablesync_curl_get_long(easy, CURLINFO_OS_ERRNO, &number)
            return number == Int(ECONNREFUSED) ? .connectionRefused : .couldNotConnect(detail)
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return .connectionLost
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            return .untrustedCertificate(detail)
        default:
            return .couldNotConnect(detail)
        }
    }
}
#endif
