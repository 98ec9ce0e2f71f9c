import Foundation

/// The process's own figures in Prometheus's conventional `process_*` families, read from Linux's `/proc` at each
/// scrape; `nil` where there is no `/proc`.
struct ProcessMetrics: Equatable {
    /// User and system processor time, in seconds.
    var cpuSeconds: Double
    /// Resident memory, in bytes.
    var residentBytes: Int
    /// Virtual memory, in bytes.
    var virtualBytes: Int
    /// Open file descriptors, sockets included.
    var openFileDescriptors: Int
    /// When the process started, in seconds since the Unix epoch.
    var startTimeSeconds: Double

    /// The figures of this process now.
    static func current() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        return parse(
            stat: stat, systemStat: system, openFileDescriptors: descriptors.count,
            ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))), pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// The figures in `/proc/self/stat` (`stat`) and `/proc/stat` (`systemStat`, for the boot time); `nil` when
    /// either is not as Linux writes it.
    static func parse(
        stat: String, systemStat: String, openFileDescriptors: Int, ticksPerSecond: Int, pageSize: Int
    ) -> ProcessMetrics? {
        // The command name, in parentheses, may hold spaces; the fields after it are numbered from 3.
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        guard let user = field(14), let kernel = field(15), let start = field(22), let virtual = field(23),
            let resident = field(24),
            let bootLine = systemStat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Double(bootLine.dropFirst("btime ".count))
        else { return nil }
        let ticks = Double(ticksPerSecond)
        return ProcessMetrics(
            cpuSeconds: (user + kernel) / ticks, residentBytes: Int(resident) * pageSize, virtualBytes: Int(virtual),
            openFileDescriptors: openFileDescriptors, startTimeSeconds: boot + start / ticks)
    }

    /// The families in Prometheus's text format, with the help texts Prometheus's own clients give them.
    func exposition() -> [UInt8] {
        let families: [(name: String, type: String, help: String, value: String)] = [
            (
                "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
                "\(cpuSeconds)"
            ),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", "\(residentBytes)"),
            ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", "\(virtualBytes)"),
            ("process_open_fds", "gauge", "Number of open file descriptors.", "\(openFileDescriptors)"),
            (
                "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                "\(startTimeSeconds)"
            )
        ]
        return Array(
            families.map { "# HELP \($0.name) \($0.help)\n# TYPE \($0.name) \($0.type)\n\($0.name) \($0.value)\n" }
                .joined().utf8)
    }
}
