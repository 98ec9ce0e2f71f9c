#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's machine-local cache, `.tablesync/`, made so that git never sees it: it holds a `.gitignore` of
/// `*`, written whenever the directory is made or found without one (`init`, a clone's first run, a run after
/// `rm -rf .tablesync` or `git clean -fdx`), before anything else is put in it.
package enum CacheDirectory {
    /// The `.gitignore` that keeps the whole cache out of git, itself included.
    package static let gitignore = Array("*\n".utf8)

    /// Makes `layout`'s cache directory, if it is missing, with its `.gitignore`.
    package static func prepare(_ layout: StoreLayout) throws {
        try FileSystem.createDirectory(layout.cacheDirectory)
        let path = layout.cacheDirectory + "/.gitignore"
        guard !FileSystem.exists(path) else { return }
        do {
            try FileSystem.writeNewFile(path, gitignore)
        } catch let error as FileSystemError where error.code == EEXIST {
            // Another run made it meanwhile.
        }
    }
}
