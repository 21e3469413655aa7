// Rendezvous: a C# binding of librendezvous (sdk/c) for Unity and other
// .NET/Mono engines. P/Invoke over the C ABI; no unsafe code. The structs
// mirror include/rendezvous.h field for field (fixed-width fields only);
// Native.CheckLayout compares their sizes with the C ones at start-up.
// One Context per UDP socket, driven from the game loop: Update every
// tick, then drain events (TryNextEvent) and datagrams (TryReceive).
// Not thread-safe, like the library: use a Context from one thread.
using System;
using System.Runtime.InteropServices;

namespace Rendezvous
{
    /// <summary>Every outcome of a library call (rdv_error).</summary>
    public enum Error : int
    {
        Ok = 0, InvalidArgument = 1, WouldBlock = 2, TooLarge = 3, BufferFull = 4, TooShort = 5,
        TooLong = 6, NotStun = 7, BadLength = 8, AttrOverrun = 9, BadAttrValue = 10, DuplicateAttr = 11,
        BadFingerprint = 12, AttrAfterFingerprint = 13, TooManyAttrs = 14, BadIntegrity = 15, Absent = 16,
        BadHandle = 17, BadCapability = 18, BadAddress = 19, Socket = 20, Random = 21, Timeout = 22,
        PunchFailed = 23, Busy = 24, State = 25, Rejected = 26,
    }

    public enum EventType : uint
    {
        None = 0, Presence = 1, Rejected = 2, Attempt = 3, Introduced = 4, Connected = 5, Failed = 6, Reported = 7, RelayOnly = 8,
        RelayFallback = 9, // the direct punch failed: RelayStart with this side's credential, or RelayDecline
    }

    /// <summary>An IPv4 or IPv6 endpoint (rdv_addr, 20 bytes).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Endpoint
    {
        public byte Family; // 1 IPv4, 2 IPv6
        public byte Reserved;
        public ushort Port;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 16)]
        public byte[] Ip;

        public override string ToString()
        {
            if (Family == 1) return string.Format("{0}.{1}.{2}.{3}:{4}", Ip[0], Ip[1], Ip[2], Ip[3], Port);
            if (Family == 2) return "[" + new System.Net.IPAddress(Ip) + "]:" + Port;
            return "none";
        }
    }

    /// <summary>What TryNextEvent returns (rdv_event, 56 bytes).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Event
    {
        public EventType Type;
        public int Code;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 16)]
        public byte[] Handle;
        public Endpoint Addr;
        public uint Path;   // 1 direct, 2 relayed
        public uint Millis;
        public uint Reserved;

        public string HandleText()
        {
            var h = BitConverter.ToString(Handle).Replace("-", "").ToLowerInvariant();
            return h.Substring(0, 8) + "-" + h.Substring(8, 4) + "-" + h.Substring(12, 4) + "-" +
                   h.Substring(16, 4) + "-" + h.Substring(20);
        }
    }

    /// <summary>A library call failed; Code says why.</summary>
    public class RendezvousException : Exception
    {
        public readonly Error Code;
        public RendezvousException(Error code, string what)
            : base(what + ": " + Native.Text(code)) { Code = code; }
    }

    internal static class Native
    {
        const string Lib = "rendezvous";

        [DllImport(Lib, EntryPoint = "rdv_strerror")] static extern IntPtr rdv_strerror(Error e);
        [DllImport(Lib)] internal static extern UIntPtr rdv_memory_size(IntPtr cfg);
        [DllImport(Lib)] internal static extern Error rdv_init(IntPtr mem, UIntPtr size, IntPtr cfg, out IntPtr ctx);
        [DllImport(Lib)] internal static extern void rdv_close(IntPtr ctx);
        [DllImport(Lib)] internal static extern Error rdv_open(IntPtr ctx, [MarshalAs(UnmanagedType.LPStr)] string local);
        [DllImport(Lib)] internal static extern Error rdv_local_addr(IntPtr ctx, out Endpoint ep);
        [DllImport(Lib)] internal static extern Error rdv_host_start(IntPtr ctx, ulong now, string mediator, string handle, string token, uint interval);
        [DllImport(Lib)] internal static extern Error rdv_join_start(IntPtr ctx, ulong now, string mediator, string handle, string token);
        [DllImport(Lib)] internal static extern Error rdv_relay_start(IntPtr ctx, ulong now, string handle, string server, string user, string credential);
        [DllImport(Lib)] internal static extern Error rdv_relay_decline(IntPtr ctx, ulong now, string handle);
        [DllImport(Lib)] internal static extern ulong rdv_update(IntPtr ctx, ulong now);
        [DllImport(Lib)] internal static extern Error rdv_next_event(IntPtr ctx, out Event ev);
        [DllImport(Lib)] internal static extern Error rdv_send(IntPtr ctx, byte[] data, UIntPtr n, ref Endpoint to);
        [DllImport(Lib)] internal static extern Error rdv_recv(IntPtr ctx, byte[] buf, UIntPtr cap, out UIntPtr n, out Endpoint from);

        internal static string Text(Error e) { return Marshal.PtrToStringAnsi(rdv_strerror(e)); }

        internal static void CheckLayout()
        {
            if (Marshal.SizeOf(typeof(Endpoint)) != 20 || Marshal.SizeOf(typeof(Event)) != 56)
                throw new InvalidOperationException("Rendezvous: struct layout differs from rendezvous.h");
        }
    }

    /// <summary>One librendezvous context with a socket the library owns.</summary>
    public sealed class Context : IDisposable
    {
        IntPtr mem, ctx;

        /// <param name="local">Numeric local endpoint to bind, e.g. "0.0.0.0:0".</param>
        public Context(string local)
        {
            Native.CheckLayout();
            var size = Native.rdv_memory_size(IntPtr.Zero);
            mem = Marshal.AllocHGlobal((IntPtr)(long)size.ToUInt64()); // the only allocation: at init
            Check(Native.rdv_init(mem, size, IntPtr.Zero, out ctx), "init");
            Check(Native.rdv_open(ctx, local), "open");
        }

        static void Check(Error e, string what)
        {
            if (e != Error.Ok) throw new RendezvousException(e, what);
        }

        public Endpoint LocalEndpoint
        {
            get { Endpoint ep; Check(Native.rdv_local_addr(ctx, out ep), "local address"); return ep; }
        }

        /// <summary>Host: the create-listing answer's presence fields.</summary>
        public void HostStart(ulong nowMs, string mediator, string presenceHandle, string presenceToken, uint intervalSeconds)
        {
            Check(Native.rdv_host_start(ctx, nowMs, mediator, presenceHandle, presenceToken, intervalSeconds), "host start");
        }

        /// <summary>Joiner: the join answer's mediator, handle and token.</summary>
        public void JoinStart(ulong nowMs, string mediator, string attemptHandle, string attemptToken)
        {
            Check(Native.rdv_join_start(ctx, nowMs, mediator, attemptHandle, attemptToken), "join start");
        }

        /// <summary>Relay-only, or the fallback after EventType.RelayFallback: allocate on
        /// the TURN relay ("ip:port" of the credential's URI) with the attempt's relay
        /// credential and punch through it.</summary>
        public void RelayStart(ulong nowMs, string attemptHandle, string turnServer, string username, string credential)
        {
            Check(Native.rdv_relay_start(ctx, nowMs, attemptHandle, turnServer, username, credential), "relay start");
        }

        /// <summary>No relay for the attempt (the server has none, or refused): after
        /// EventType.RelayFallback or RelayOnly the attempt fails now.</summary>
        public void RelayDecline(ulong nowMs, string attemptHandle)
        {
            Check(Native.rdv_relay_decline(ctx, nowMs, attemptHandle), "relay decline");
        }

        /// <summary>Runs timers and I/O; returns when (ms) to call again.</summary>
        public ulong Update(ulong nowMs) { return Native.rdv_update(ctx, nowMs); }

        public bool TryNextEvent(out Event ev) { return Native.rdv_next_event(ctx, out ev) == Error.Ok; }

        /// <summary>The game's own datagram to a connected peer.</summary>
        public Error Send(byte[] data, int length, Endpoint to)
        {
            if (length < 0 || length > data.Length) throw new ArgumentOutOfRangeException("length");
            return Native.rdv_send(ctx, data, (UIntPtr)(uint)length, ref to);
        }

        /// <summary>The next game datagram into buf; false when none is queued.</summary>
        public bool TryReceive(byte[] buf, out int length, out Endpoint from)
        {
            UIntPtr n;
            var e = Native.rdv_recv(ctx, buf, (UIntPtr)(uint)buf.Length, out n, out from);
            length = (int)n.ToUInt32();
            if (e == Error.WouldBlock) return false;
            Check(e, "receive");
            return true;
        }

        public void Dispose()
        {
            if (ctx != IntPtr.Zero) { Native.rdv_close(ctx); ctx = IntPtr.Zero; }
            if (mem != IntPtr.Zero) { Marshal.FreeHGlobal(mem); mem = IntPtr.Zero; }
        }
    }
}
