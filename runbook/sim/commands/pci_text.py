"""`lspci -vv` bodies, modelled line for line on the real outputs in
fixtures/real-outputs/lspci-vv (ConnectX-7 and RTX 6000 Ada captures)."""

from __future__ import annotations

from ..pcidevices import PciDevice

SPEEDS = {"2.5GT/s": 1, "5GT/s": 2, "8GT/s": 3, "16GT/s": 4, "32GT/s": 5}


def lnksta(dev: PciDevice) -> str:
    link = dev.link
    now = link.current_speed()
    speed = f"Speed {now}" + (" (downgraded)" if SPEEDS.get(now, 0) < SPEEDS.get(link.cap_speed, 0) else "")
    width = f"Width x{link.width}" + (" (downgraded)" if link.width < link.cap_width else "")
    return f"{speed}, {width}"


def express(dev: PciDevice, payload: int) -> str:
    link = dev.link
    return (
        f"\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
        f"\t\tDevCap:\tMaxPayload {payload} bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited\n"
        "\t\t\tExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 75W\n"
        "\t\tDevCtl:\tCorrErr+ NonFatalErr+ FatalErr+ UnsupReq-\n"
        "\t\t\tRlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-\n"
        f"\t\t\tMaxPayload {payload} bytes, MaxReadReq 512 bytes\n"
        "\t\tDevSta:\tCorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-\n"
        f"\t\tLnkCap:\tPort #0, Speed {link.cap_speed}, Width x{link.cap_width}, ASPM not supported\n"
        "\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n"
        "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+\n"
        "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-\n"
        f"\t\tLnkSta:\t{lnksta(dev)}\n"
        "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
        "\t\tDevCap2: Completion Timeout: Range ABC, TimeoutDis+ NROPrPrP- LTR-\n"
        "\t\t\t 10BitTagComp+ 10BitTagReq+ OBFF Not Supported, ExtFmt- EETLPPrefix-\n"
        "\t\t\t EmergencyPowerReduction Not Supported, EmergencyPowerReductionInit-\n"
        "\t\t\t FRS- TPHComp- ExtTPHComp-\n"
        "\t\t\t AtomicOpsCap: 32bit+ 64bit+ 128bitCAS+\n"
        "\t\tDevCtl2: Completion Timeout: 50us to 50ms, TimeoutDis- LTR- 10BitTagReq- OBFF Disabled,\n"
        "\t\t\t AtomicOpsCtl: ReqEn+\n"
        f"\t\tLnkCap2: Supported Link Speeds: 2.5-{link.cap_speed}, Crosslink- Retimer+ 2Retimers+ DRS-\n"
        f"\t\tLnkCtl2: Target Link Speed: {link.cap_speed}, EnterCompliance- SpeedDis-\n"
        "\t\t\t Transmit Margin: Normal Operating Range, EnterModifiedCompliance- ComplianceSOS-\n"
        "\t\t\t Compliance Preset/De-emphasis: -6dB de-emphasis, 0dB preshoot\n"
        "\t\tLnkSta2: Current De-emphasis Level: -6dB, EqualizationComplete+ EqualizationPhase1+\n"
        "\t\t\t EqualizationPhase2+ EqualizationPhase3+ LinkEqualizationRequest-\n"
        "\t\t\t Retimer- 2Retimers- CrosslinkRes: unsupported\n"
    )


AER = (
    "\tCapabilities: [100 v1] Advanced Error Reporting\n"
    "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-\n"
    "\t\tUEMsk:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq+ ACSViol-\n"
    "\t\tUESvrt:\tDLP+ SDES- TLP- FCP+ CmpltTO+ CmpltAbrt- UnxCmplt+ RxOF+ MalfTLP+ ECRC+ UnsupReq- ACSViol-\n"
    "\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-\n"
    "\t\tCEMsk:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr+\n"
    "\t\tAERCap:\tFirst Error Pointer: 00, ECRCGenCap+ ECRCGenEn- ECRCChkCap+ ECRCChkEn-\n"
    "\t\t\tMultHdrRecCap- MultHdrRecEn- TLPPfxPres- HdrLogCap-\n"
    "\t\tHeaderLog: 00000000 00000000 00000000 00000000\n"
)


def gpu_body(dev: PciDevice, irq: int) -> str:
    return (
        "\tSubsystem: NVIDIA Corporation Device 1851\n"
        f"\tPhysical Slot: {dev.ref.index + 1}\n"
        "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+\n"
        "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-\n"
        "\tLatency: 0\n"
        f"\tInterrupt: pin A routed to IRQ {irq}\n"
        f"\tNUMA node: {dev.numa}\n"
        "\tRegion 0: Memory at e4000000 (32-bit, non-prefetchable) [size=16M]\n"
        "\tRegion 1: Memory at 21c000000000 (64-bit, prefetchable) [size=64G]\n"
        "\tRegion 3: Memory at 21d000000000 (64-bit, prefetchable) [size=32M]\n"
        "\tCapabilities: [40] Power Management version 3\n"
        "\t\tFlags: PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0+,D1-,D2-,D3hot+,D3cold-)\n"
        "\t\tStatus: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-\n"
        "\tCapabilities: [48] MSI: Enable+ Count=1/1 Maskable- 64bit+\n"
        "\t\tAddress: 00000000fee00000  Data: 0000\n"
        + express(dev, 256)
        + AER
        + "\tCapabilities: [bb0 v1] Physical Resizable BAR\n"
        "\t\tBAR 1: current size: 64GB, supported: 64MB 128MB 256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB 64GB\n"
        "\tKernel driver in use: nvidia\n"
        "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
    )


def nic_body(dev: PciDevice, irq: int, part: str, serial: str, dual: bool, product: str = "") -> str:
    ports = "dual-port" if dual else "single-port"
    product = (
        product or f"ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE, {ports} QSFP56, PCIe4.0 x16"
    )
    return (
        "\tSubsystem: Mellanox Technologies Device 0007\n"
        "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+\n"
        "\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-\n"
        "\tLatency: 0, Cache Line Size: 64 bytes\n"
        f"\tInterrupt: pin A routed to IRQ {irq}\n"
        f"\tNUMA node: {dev.numa}\n"
        "\tRegion 0: Memory at 20fffc000000 (64-bit, prefetchable) [size=32M]\n"
        "\tExpansion ROM at b8100000 [disabled] [size=1M]\n"
        + express(dev, 512)
        + "\tCapabilities: [48] Vital Product Data\n"
        f"\t\tProduct Name: {product}\n"
        "\t\tRead-only fields:\n"
        f"\t\t\t[PN] Part number: {part}\n"
        "\t\t\t[EC] Engineering changes: A9\n"
        f"\t\t\t[V2] Vendor specific: {part}\n"
        f"\t\t\t[SN] Serial number: {serial}\n"
        f"\t\t\t[V0] Vendor specific: PCIeGen{SPEEDS.get(dev.link.cap_speed, 4)} x16\n"
        "\t\t\t[RV] Reserved: checksum good, 1 byte(s) reserved\n"
        "\t\tEnd\n"
        "\tCapabilities: [9c] MSI-X: Enable+ Count=64 Masked-\n"
        "\t\tVector table: BAR=0 offset=00002000\n"
        "\t\tPBA: BAR=0 offset=00003000\n"
        "\tCapabilities: [c0] Vendor Specific Information: Len=18 <?>\n"
        "\tCapabilities: [40] Power Management version 3\n"
        "\t\tFlags: PMEClk- DSI- D1- D2- AuxCurrent=375mA PME(D0-,D1-,D2-,D3hot-,D3cold+)\n"
        "\t\tStatus: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-\n"
        + AER
        + "\tCapabilities: [150 v1] Alternative Routing-ID Interpretation (ARI)\n"
        "\t\tARICap:\tMFVC- ACS-, Next Function: 0\n"
        "\t\tARICtl:\tMFVC- ACS-, Function Group: 0\n"
        "\tKernel driver in use: mlx5_core\n"
        "\tKernel modules: mlx5_core\n"
    )


def other_body(dev: PciDevice, capabilities: str = "") -> str:
    lines = [
        f"\tSubsystem: {dev.vendor} Device 0000",
        "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+",
        f"\tNUMA node: {dev.numa}",
    ]
    text = "\n".join(lines) + "\n" + capabilities
    if dev.driver:
        text += f"\tKernel driver in use: {dev.driver}\n"
    return text
