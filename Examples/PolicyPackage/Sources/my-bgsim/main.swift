import BGSimCommandLine
import QuietHoursPolicy

// bgsim, with every command taking the policies listed here by name; each manifest records
// this program, its version and which package each policy came from.
BGSimCommandLine.main(policies: [QuietHoursPolicy.self], version: "0.1.0")
