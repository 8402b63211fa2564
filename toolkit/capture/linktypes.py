"""LINKTYPE_* numbers of pcap / pcapng (tcpdump.org/linktypes.html): the ones the reader
decodes, and the names of the others, so a frame that is not decoded is named."""
from __future__ import annotations

NULL, ETHERNET, PPP, FDDI, PPP_HDLC, PPP_ETHER = 0, 1, 9, 10, 50, 51
ATM_RFC1483, RAW, RAW12, RAW14, C_HDLC, IEEE802_11, LOOP, SLL = 100, 101, 12, 14, 104, 105, 108, 113
PRISM, RADIOTAP, AVS, PPP_PPPD, PPI, PPP_WITH_DIR = 119, 127, 163, 166, 192, 204
IPV4, IPV6, NFLOG, IPOIB, SLL2 = 228, 229, 239, 242, 276

NAMES = {
    0: "NULL", 1: "ETHERNET", 3: "AX25", 6: "IEEE802_5", 7: "ARCNET_BSD", 8: "SLIP", 9: "PPP", 10: "FDDI",
    12: "RAW", 14: "RAW", 50: "PPP_HDLC", 51: "PPP_ETHER", 100: "ATM_RFC1483", 101: "RAW", 104: "C_HDLC",
    105: "IEEE802_11", 107: "FRELAY", 108: "LOOP", 113: "LINUX_SLL", 114: "LTALK", 117: "PFLOG",
    119: "IEEE802_11_PRISM", 122: "IP_OVER_FC", 123: "SUNATM", 127: "IEEE802_11_RADIOTAP", 129: "ARCNET_LINUX",
    138: "APPLE_IP_OVER_IEEE1394", 139: "MTP2_WITH_PHDR", 140: "MTP2", 141: "MTP3", 142: "SCCP", 143: "DOCSIS",
    144: "LINUX_IRDA", 163: "IEEE802_11_AVS", 165: "BACNET_MS_TP", 166: "PPP_PPPD", 169: "GPRS_LLC",
    177: "LINUX_LAPD", 187: "BLUETOOTH_HCI_H4", 189: "USB_LINUX", 192: "PPI", 195: "IEEE802_15_4_WITHFCS",
    197: "ERF", 201: "BLUETOOTH_HCI_H4_WITH_PHDR", 202: "AX25_KISS", 204: "PPP_WITH_DIR", 209: "IPMB_LINUX",
    215: "IEEE802_15_4_NONASK_PHY", 220: "USB_LINUX_MMAPPED", 224: "FC_2", 227: "CAN_SOCKETCAN", 228: "IPV4",
    229: "IPV6", 230: "IEEE802_15_4_NOFCS", 231: "DBUS", 235: "DVB_CI", 239: "NFLOG", 240: "NETANALYZER",
    241: "NETANALYZER_TRANSPARENT", 242: "IPOIB", 247: "NETLINK", 248: "BLUETOOTH_LINUX_MONITOR",
    249: "BLUETOOTH_BREDR_BB", 250: "BLUETOOTH_LE_LL", 251: "BLUETOOTH_LE_LL_WITH_PHDR", 252: "WIRESHARK_UPPER_PDU",
    256: "PROFIBUS_DL", 257: "PKTAP", 258: "EPON", 263: "ZWAVE_R3", 266: "NORDIC_BLE", 274: "USB_DARWIN",
    276: "LINUX_SLL2", 288: "EDK2_MM", 289: "DEBUG_ONLY", 290: "EDK2_MM",
}
# the JSON's short names for the ones read (kept from earlier versions of the schema)
SHORT = {ETHERNET: "ethernet", NULL: "bsd-loopback", LOOP: "openbsd-loopback", RAW: "raw-ip", RAW12: "raw-ip",
         RAW14: "raw-ip", IPV4: "raw-ipv4", IPV6: "raw-ipv6", SLL: "linux-sll", SLL2: "linux-sll2", PPP: "ppp",
         PPP_HDLC: "ppp-hdlc", PPP_ETHER: "pppoe", PPP_PPPD: "ppp-pppd", PPP_WITH_DIR: "ppp-with-dir",
         C_HDLC: "cisco-hdlc", IEEE802_11: "ieee802.11", RADIOTAP: "ieee802.11-radiotap", PRISM: "ieee802.11-prism",
         AVS: "ieee802.11-avs", PPI: "ppi", NFLOG: "linux-nflog", IPOIB: "ipoib", ATM_RFC1483: "atm-rfc1483",
         FDDI: "fddi"}
DECODED = frozenset(SHORT)


def name(link: int) -> str:
    """LINKTYPE_NAME, as the pcap registry spells it."""
    return f"LINKTYPE_{NAMES[link]}" if link in NAMES else f"LINKTYPE {link}"


def short(link: int) -> str:
    return SHORT.get(link) or name(link)
