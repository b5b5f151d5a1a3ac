"""The misses each node-evidence first-contact half is recorded to have (issue 24; the
training-log halves are in tests/first_contact_misses.py, which merges these into KNOWN_MISSES):
("corpus", half) -> the case files not read right, each set with why its cases are left, the
first-contact score and where it is recorded (tests/data/first_contact/). A set only shrinks.
"""
from __future__ import annotations

CORPUS_MISSES = {
    ("corpus", "dev"): set(),
    # 18/23 at first contact; 105, 107, 109, 113 and 137 read right since their classes were
    # built (systemctl status of a service wrapping a log, a crash-looping service's config
    # error, repeated module errors, a source that failed to start, dcgmi discovery -l).
    ("corpus", "holdout"): set(),
    # 35/45 at first contact; nine read right since their classes were built (dcgmi diag Fail -
    # All with per-GPU warnings, fragments and Error rows; a prompt line above the output; a mark
    # after a value; lspci listings; launcher-tagged output; the FM start script's usage). 236
    # stays: its expected verdict (unhealthy for a row remap pending after correctable errors
    # only) goes against NVIDIA's documentation, which says new work may still be launched
    # (A100 GPU memory error management, "Error Recovery and Response Flags"; NVML
    # nvmlDeviceGetRemappedRows): gpuslo reads it warn with action drain_and_reset.
    # 24/30 at first contact (2026-12-05, a047cd7; tests/data/first_contact/corpus_fresh2_*.txt)
    # 28/30 at evidence3-r4: 311 and 313 are read with their PCI (and 311's port) but class
    # noise, not the case's warn: gpuslo's catalogue follows the Fabric Manager guide (D.4: SXid
    # 22013 "can be safely ignored"; fabric_manager.yaml, xid_policy.yaml boot_noise).
    ("corpus", "fresh2"): {
        "311_fm-systemctl-status-running-then-nonfatal-sxid-22013-port-60.txt",
        "313_dmesg-nvswitch-sxid-22013-nonfatal-then-mlx5-port-flapping.txt",
    },
    # 25/31 at first contact (2026-12-05, 4578407; tests/data/first_contact/
    # corpus_fresh3_2026-12-05.txt). Read right since: a dcgmi diag deployment check of the
    # node's set-up failing (persistence mode: a configuration matter, unknown, not fatal), an
    # lspci GPU memory region `<unassigned>` (fatal: the driver cannot map it), a dcgm-exporter
    # log ending in a bare non-zero `exit status` (source_unavailable), FM's multi-line "GPU NVL
    # Fatal error" record (one fatal event), and an ibstatus port Down/Disabled beside active
    # ports with no expectation (a spare: mlx5 shows each port as a device of its own). 429
    # stays as fresh2's 311 and 313: SXid 22013 is noise by the Fabric Manager guide (D.4 "can be
    # safely ignored") and here 60 s after boot (xid_policy.yaml boot_noise); the case cites
    # only the guide's general non-fatal wording.
    ("corpus", "fresh3"): {
        "429_dmesg-kernel-prefix-after-stamp-sxid-22013-nonfatal-four-links-triplets.txt",
    },
    # 21/32 at first contact (2026-12-06, 0dba1ce; tests/data/first_contact/
    # corpus_fresh4_2026-12-05.txt). Read right since: the driver/library mismatch in every
    # framing is one signal, driver_mismatch (the kernel's NVRM "API mismatch" was classified but
    # as a driver_message; NVML's "Driver/library version mismatch" was missed under a command
    # pasted without its prompt and in a transcript whose next command no parser reads: a text
    # nothing reads whole is now read command by command); a tool that itself failed is
    # source_unavailable (ibstatus's own "Fatal error:", nv-hostengine's console messages under
    # the shell-script dcgm-exporter); the Kubernetes device plugin's XidCriticalError is the Xid
    # (new kind device-plugin-log; the withdrawn GPU is device_plugin_unhealthy, unknown); Slurm's
    # "gres/gpu count reported lower than configured (R < C)" is gpu_missing (new kind
    # slurm-node); `nvidia-smi -L` under a bare command line (MIG lines were already folded); a
    # headerless `--query-gpu` CSV takes its columns from the pasted command. Nothing left.
    ("corpus", "fresh4"): set(),
    # 27/32 at first contact (2026-12-06, ab56305; tests/data/first_contact/
    # corpus_fresh5_2026-12-06.txt). Read right since (tests/inspect/test_fresh5_classes.py): a
    # MIG-enabled GPU in the default table is one GPU whose ECC cell shows the mode (`On`), its
    # MIG devices' Vol Unc ECC counts summed into it (615, 630); a dcgm-exporter page of MIG
    # instances cut with a bracketed ellipsis `[... ...]` is read for the series it shows (611);
    # a table of more than one model gives the node total beside the per-model counts (624); a
    # wide `--query-gpu` header (6 KB, ~200 columns) is CSV, and its clocks_event_reasons_counters
    # are history while the active mask is now (618). Nothing left.
    ("corpus", "fresh5"): set(),
    # 23/30 at first contact (2026-12-06, ce35eb4; tests/data/first_contact/
    # corpus_fresh6_2026-12-06.txt), three of the misses fail-open. Read right since
    # (tests/inspect/test_fresh6_classes.py): a warn Xid 32 (PBDMA, a PCIe/DMA path fault per
    # NVIDIA's catalogue) repeated on one GPU within the hour escalates to fatal (702); "No NVIDIA
    # graphics adapter(s) found" is the probe failing (703); an NVRM line with a fatal-class word
    # ("Reset required") is an event of its own, never folded into an earlier unknown one, and
    # the kernel_log_read inventory is not `ok` over a log with fatal or unknown lines (703, 708);
    # no `ports_active` inventory when no port is active, in ibstatus with tabs and in an ibstat
    # fragment (709, 728); `nvidia-smi.exe --query-gpu` names the columns, and a bracketed cell
    # (`[Unknown Error]`) is an unreadable field, not an error line (714); a bare root prompt
    # `# ` before a tool or `cat /proc/...` starts a command in a transcript (722). Nothing left.
    ("corpus", "fresh6"): set(),
    # 20/21 at first contact (2026-12-06, 3bc6787; tests/data/first_contact/
    # corpus_fresh7_2026-12-06.txt), the miss a false alarm: a whole HGX H100 boot log
    # (`dmesg --decode`, no Xid, no NVRM error) read unhealthy. Read right since
    # (tests/inspect/test_fresh7_classes.py): a kernel log's mlx5 port never up while another
    # port is up is a spare with no devices expected (warn), as the fabric tools' rule has it;
    # the PCI core's `BAR N: failed to assign` at enumeration is claimed, not an unrecognised
    # device error. Nothing left.
    ("corpus", "fresh7"): set(),
    # Eighth fresh batch (20 new public cases, 1001-1020): 19/20 on first contact (2026-12-06,
    # corpus_fresh8_2026-12-06.txt): fi_getinfo -61 on a pod with EFA devices expected gave a
    # fatal `network_devices_missing` but also an `efa_devices` count of 0 marked ok. Read right
    # since (tests/inspect/test_fresh8_classes.py): a count short of the expectation is fatal.
    ("corpus", "fresh8"): set(),
    # Ninth fresh batch (22 new public cases, 1101-1122): 19/22 on first contact (2026-12-06,
    # f008934; tests/data/first_contact/corpus_fresh9_2026-12-06.txt), none a false alarm or
    # fail-open (all three read unknown). Read right since (tests/inspect/test_fresh9_classes.py):
    # a dcgm-exporter page pasted with the curl/wget command above it and curl's "Connection ...
    # left intact" note below is read as the page (1108; with no Xid field the page judges only
    # what it shows, as for fresh 211/220 and fresh5 611: no Xid finding either way, never "no
    # Xid"); logrus's terminal form `FATA[0000] ...` is the exporter exiting, source_unavailable
    # (1117); an NVRM line with the status NV_ERR_GPU_IS_LOST ("GPU lost from the bus") is the
    # GPU off the bus, fatal as Xid 79, with no Xid or PCI id (1118). Nothing left.
    ("corpus", "fresh9"): set(),
    # Tenth fresh batch (22 new public cases, 1201-1222, half of them healthy guards): 21/22 on
    # first contact (2026-12-06, 14d7ab5; tests/data/first_contact/corpus_fresh10_2026-12-06.txt),
    # the one miss fail-open: an `ibstat` port Down/Disabled beside an Active one read as a
    # spare. Read right since (tests/inspect/test_fresh10_classes.py): a down port that still
    # holds the LID the subnet manager assigned it (`Base lid: 38`) was on the fabric, not a
    # spare (1214); LID 0 or 0xFFFF stays a spare. Nothing left.
    ("corpus", "fresh10"): set(),
    # Eleventh fresh batch (19 new public cases, 1301-1319, twelve healthy guards), scored once at
    # the end of round 11 against its merged work: 17/19 (2026-12-06, 6711620; tests/data/
    # first_contact/corpus_fresh11_2026-12-06.txt). Read right since (tests/inspect/
    # test_fresh11_classes.py): an unstamped, indented NVRM line under a driver message that
    # names no GPU is that message's next printk line and names its GPU (1319's `BAR2 is 0M @ 0x0
    # (PCI:0000:00:05.0)`); the driver's load banner after an init failure is the same load, no
    # reload (1318); a kernel splat whose faulting frame or call trace is in an NVIDIA module is
    # one event from its header on (1309: `BUG: kernel NULL pointer dereference` ... `RIP:
    # 0010:nvlogInit+0x6/0xd0 [nvidia]`, an oops: fatal, reboot_node; the header and ` [nvidia`
    # frame literals are prefilter anchors, tests/exporter/test_kernel_splats.py). Nothing left.
    ("corpus", "fresh11"): set(),
    ("corpus", "fresh"): {
        "236_nvidia-smi-q-a100-sxm4-80gb-xid63-row-remap-pending-correctable-dram-177-elided.txt",
    },
    # Twelfth fresh batch (22 new public cases, 1401-1422): 17/22 on first contact (2026-12-07,
    # 0e68f6c; tests/data/first_contact/corpus_fresh12_2026-12-07.txt), three misses fail-open.
    # Read right since (tests/inspect/test_fresh12_classes.py): a down port is a spare only when
    # switched off (Disabled), of an adapter model with an active port and not more down ports
    # than active ones (policy/port_spares.py): an enabled port Polling beside an active sibling
    # is a lost link (1409), seven ConnectX-8 ports Disabled beside four active ConnectX-7 are
    # the node's fabric adapters down (1422); the device-handle error naming index and PCI address
    # (`for GPU3: 0000:04:00.0:`) keeps both, read by the table, -q, -L and CSV it sits in, and
    # headerless rows of identity columns (index, pci.bus_id, name, uuid) name themselves past a
    # person's `#` comment line (1417);
    # a PCIe link that kept fewer than half its lanes is fatal, half or more stays warn, with no
    # PCI id when the excerpt has no device header (1418, policy/pcie_width.py); a pager's status
    # line (`lines 1-22/22 (END)`) is the terminal's, not an unrecognised part (1421). Nothing
    # left.
    ("corpus", "fresh12"): set(),
    # Thirteenth fresh batch (20 new public cases, 1501-1520): 19/20 on first contact (2026-12-07,
    # 1219853; tests/data/first_contact/corpus_fresh13_2026-12-07.txt), the miss read unknown but
    # without naming the failure. Read right since (tests/inspect/test_fresh13_classes.py): the
    # infiniband-diags tools' own fatal lines (libibmad `ibpanic: [pid] main: ...`, the diags'
    # `ibstat: iberror: [pid N] main: failed: ...` / `iberror: failed: ...`) with no port read are
    # ibstat failing, source_unavailable, no port judged (1513, evidence/fabric/diag_errors.py);
    # an `ibwarn:` line stays a warning beside readable ports. Nothing left.
    ("corpus", "fresh13"): set(),
    # Fourteenth fresh batch (21 forum, blog and personal-note cases, 1601-1621): 16/21 on first
    # contact (2026-12-07, 3128df0; tests/data/first_contact/corpus_fresh14_2026-12-07.txt). Read
    # right since (tests/inspect/test_fresh14_classes.py): a prompt of another shell theme
    # (`➜`, `❯`, fish `~>`, PowerShell `PS C:\>`) before a tool starts its output (1606); a
    # fabric-manager line ending in a colon reads with the next (1609); PCI-less adapter-init
    # lines (`RmInitAdapter failed`, `Cannot attach gpu`) take the one GPU their burst names
    # (1612); dcgm-exporter's log through the journal, its unit killed, is the source gone
    # (1617); `Link N:` status lines with no `GPU N:` header are one unnamed GPU's links (1619).
    # Nothing left.
    ("corpus", "fresh14"): set(),
    # Fifteenth fresh batch (20 cases from vendor pages, site runbooks, repository captures and
    # threads, 1703-1722), scored once at the end of round 13 against its merged work: 16/20
    # (2026-12-07, b31134c; tests/data/first_contact/corpus_fresh15_2026-12-07.txt). Read right
    # since (tests/inspect/test_fresh15_classes.py): NVLink slots a bridged PCIe board never
    # connects are no fault, judged against the board's bridges (1720, a false fatal on two
    # H100 PCIe with three bridges; policy/nvlink_links.py), and GPU 0's `nvlink -s` links stay
    # with their header; Fabric Manager's driver interface version mismatch is FM failed (1715);
    # a `grep -A` excerpt of `nvidia-smi -q`, its `--` separators, starts a GPU per repeated
    # group (1717); a non-GPU device's narrowed PCIe link is a warn on that device (1706).
    # Nothing left.
    ("corpus", "fresh15"): set(),
    # Sixteenth fresh batch (16 cases from issue threads and a vendor page, 1801-1820 with gaps):
    # 12/16 on first contact (2026-12-07, e97fb08; tests/data/first_contact/
    # corpus_fresh16_2026-12-07.txt). Read right since (tests/inspect/test_fresh16_classes.py): an
    # ibstat/ibstatus block whose indentation was lost keeps its port fields (1803); nvidia-smi's
    # one-line NVML failure (driver/library version mismatch) ends that command's output and is
    # read below it (1804); Fabric Manager's bare-level "failed to configure" / "config error"
    # lines are FM failed (1812); CSV samples of one GPU repeated are one GPU (1818).
    # Nothing left.
    ("corpus", "fresh16"): set(),
    # Seventeenth fresh batch (15 cases captured in public repositories and issue threads,
    # 1901-1920 with gaps), scored once at the end of round 14 against its merged work: 15/15
    # (2026-12-07, c150c68; tests/data/first_contact/corpus_fresh17_2026-12-07.txt). Nothing left.
    ("corpus", "fresh17"): set(),
    # Eighteenth fresh batch (20 cases from repository captures, vendor pages and issue threads,
    # 2001-2020), scored once before any fix: 19/20 (2026-12-07, 0578a12; tests/data/
    # first_contact/corpus_fresh18_2026-12-07.txt). Read right since (tests/inspect/
    # test_fresh18_classes.py): a GSP RPC error report's own lines (the active RPC and the RPC
    # history tables) whose Xid 119/120 line the excerpt does not show are unknown, once (2014).
    # Nothing left.
    ("corpus", "fresh18"): set(),
    # Nineteenth fresh batch (20 cases from issue threads, 2101-2120), scored once at the end of
    # round 15 against its merged work: 18/20 (2026-12-07, f55b5c6; tests/data/first_contact/
    # corpus_fresh19_2026-12-07.txt). Read right since (tests/inspect/test_fresh19_classes.py):
    # the host engine's `Cannot load NVML; DCGM will proceed without managing GPUs` is the source
    # unavailable (2112); a fan or temperature nvidia-smi cannot read (`ERR!`) leaves that GPU's
    # thermal health unknown in the table, `-q`, XML and CSV forms (2108). Nothing left.
    ("corpus", "fresh19"): set(),
    # Twentieth fresh batch (20 captures committed to public repositories, 2201-2220), scored
    # once before any fix: 18/20 (2026-12-07, 31c2e59; tests/data/first_contact/
    # corpus_fresh20_2026-12-07.txt). Read right since (tests/inspect/test_fresh20_classes.py): a
    # tool's output quoted under a constant comment or quote marker (`% `, `# `, `> `, `// `,
    # `;`, `+ `) is read under it, for every kind, when the unquoted block is evidence (2201:
    # nvidia-smi -q pasted into a MATLAB file; inspect/quoted.py); an lspci GPU link at half its
    # lanes is judged against the port above it, whose LnkCap is the slot's width (lspci's own
    # LnkCap and `(downgraded)` mark are the GPU's alone): unknown when the capture does not show
    # that port, warn when it is as narrow, fatal when it is wider (2215: x8 of x16 on a
    # bifurcated riser, one function's lspci; policy/pcie_width.lspci_narrow). Nothing left.
    ("corpus", "fresh20"): set(),
    # Twenty-first fresh batch (20 cases from issue threads, 2301-2320), scored once at the end
    # of round 16 against its merged work: 17/20 (2026-12-07, 4115221; tests/data/
    # first_contact/corpus_fresh21_2026-12-07.txt). Read right since: a DCGM host-engine start
    # failure (`Failed to start host engine server`, the 1.x engine's; DCGM main.cpp's family)
    # leaves no DCGM data whatever the exporter prints after it, and a daemon log whose daemon
    # did not run gives no ok `log_read`; a later `Started host engine version` line retries it
    # (2320; evidence/dcgm/dcgmi.HOST_ENGINE_START_FAILED, inspect/daemon_logs.py); a tool's
    # output behind a runner's or log shipper's line prefix (`[task <stamp>] [train]
    # [nvidia-smi(stdout)]`, `[pod/...]`, a CRI `<stamp> stdout F`, a compose `name |`) is read
    # without it when only then a reader recognises it, and an NVML message quoted inside a
    # sentence is no NVML error (2311; inspect/prefixed.py, proc.quoted_in_prose); the
    # inventory names every GPU an nvidia-smi output shows and reads, one `gpus_seen` per GPU
    # (its own row's bus id) beside the per-model count, none for a GPU with a problem (2307:
    # three A100 rows under a zsh `%` prompt, the third box cut, showed the count only;
    # inspect/nvidia_smi_findings.each_gpu_seen). Nothing left.
    ("corpus", "fresh21"): set(),
    # Twenty-second fresh batch (20 cases from issue threads, 2401-2420), scored once at the
    # start of round 17, before its fixes: 16/20 (2026-12-07, d0b7d41; tests/data/first_contact/
    # corpus_fresh22_2026-12-07.txt). Read right since: the hand-copied `NVRM Xid (PCI:…) : 32`
    # with no colon after NVRM and a space before the colon (2405; kernel_log.parse._XID, and the
    # catalogue's unreadable_records for an NVRM Xid line no form reads); NVML's mismatch passed on
    # by a container runtime's error (docker compose, runc, nvidia-container-cli) (2404;
    # evidence/nvidia_smi/proc._RUNTIME_CONTEXT); nvidia-smi tables whose last box is cut name each
    # GPU they show (2413, 2415; fresh21 2307's one `gpus_seen` per GPU). Nothing left.
    ("corpus", "fresh22"): set(),
    # Twenty-third fresh batch (20 cases: repository captures, gist and pastebin pages, vendor and
    # blog pages, 2501-2520), scored once at the end of round 17 against its merged work: 20/20
    # (2026-12-07, 824c7d8; tests/data/first_contact/corpus_fresh23_2026-12-07.txt).
    ("corpus", "fresh23"): set(),
    # Twenty-fourth fresh batch (17 cases: pastebin and gist pages, three new issue threads, one
    # committed capture, 2601-2617), scored once at the start of round 18, before its fixes:
    # 14/17 (2026-12-08, 9a29581; tests/data/first_contact/corpus_fresh24_2026-12-08.txt). Read
    # right since (tests/inspect/test_fresh24_classes.py): `ibv_devinfo` whose indentation a paste
    # lost, behind a chained prompt and an echoed banner, is read by its field names when a
    # `state: PORT_<WORD>` line stands beside `hca_id:` and `port:`, and PORT_INIT/ARMED without
    # `-v` have the physical link up (IBA §7.2) (2605); the kernel's "available PCIe bandwidth,
    # limited by ... x4 link ... (capable of ... x16 link)" notice is `pcie_degraded` warn for the
    # device, in the text and the file scan (2607); a down port is a spare only as a strict
    # minority of the node's ports, one of two Disabled is `unknown` (fresh2 322 keeps its
    # reading), most of them fatal (2611). Nothing left.
    ("corpus", "fresh24"): set(),
    # Twenty-fifth fresh batch (15 cases: pastebin, gist and CSDN blog pages, 2701-2715), scored
    # once at the end of round 18 against its merged work: 14/15 (2026-12-08, 4fdf342; tests/
    # data/first_contact/corpus_fresh25_2026-12-08.txt). Read right since: a reader's note after
    # an ibstat `CA '<name>'` header (a blog's `——>>>>` notes) keeps each port on its device
    # (2705's ports ran together unnamed; evidence/fabric/tools._CA_HEADER,
    # tests/inspect/test_fresh25_classes.py). Left: 2705's expectation forbids a fatal for port 2
    # of each dual-port HCA `Down`/`Polling` beside an Active port 1 ("may simply be uncabled");
    # the spare rule (policy/port_spares.py) keeps an enabled port that is Polling a lost path
    # unless devices are expected, since an uncabled port and a pulled or dead cable read the same
    # and a port left unused on purpose reads `Disabled` (fresh12 1409, the same shape, fatal).
    ("corpus", "fresh25"): {
        "2705_blog-ibstat-root-prompt-two-connectx3-mt4099-mlx4-0-mlx4-1-port1-active-56-port2-"
        "down-polling-with-author-arrow-notes.txt",
    },
}
