// A Unity-style joiner over the Rendezvous binding: bind the attempt of a
// join answer (relay-only when the relay arguments are given), punch, send
// "hello from c#" until the host's echo comes back; prints the events and
// the echo, exits 0 on the echo. Never prints the token or credential.
//   mono Join.exe MEDIATOR HANDLE TOKEN SECONDS [TURN_SERVER USERNAME CREDENTIAL]
using System;
using System.Diagnostics;
using System.Text;
using System.Threading;
using Rendezvous;

static class JoinExample
{
    static int Main(string[] args)
    {
        var clock = Stopwatch.StartNew();
        var deadline = ulong.Parse(args[3]) * 1000;
        using (var ctx = new Context("127.0.0.1:0"))
        {
            ctx.JoinStart((ulong)clock.ElapsedMilliseconds, args[0], args[1], args[2]);
            if (args.Length == 7) ctx.RelayStart((ulong)clock.ElapsedMilliseconds, args[1], args[4], args[5], args[6]);
            var buf = new byte[1200];
            var hello = Encoding.ASCII.GetBytes("hello from c#");
            Endpoint peer = new Endpoint();
            bool connected = false;
            ulong nextHello = 0;
            while ((ulong)clock.ElapsedMilliseconds < deadline)
            {
                ulong now = (ulong)clock.ElapsedMilliseconds;
                ulong next = ctx.Update(now);
                Event ev;
                while (ctx.TryNextEvent(out ev))
                {
                    if (ev.Type == EventType.Connected)
                    {
                        peer = ev.Addr;
                        connected = true;
                        Console.WriteLine("connected " + ev.Addr + " path=" + ev.Path);
                    }
                    else if (ev.Type == EventType.Failed) Console.WriteLine("failed " + (Error)ev.Code);
                    else Console.WriteLine(ev.Type.ToString().ToLowerInvariant() + " " + ev.HandleText());
                }
                int n;
                Endpoint from;
                while (ctx.TryReceive(buf, out n, out from))
                {
                    var text = Encoding.ASCII.GetString(buf, 0, n);
                    if (text.StartsWith("echo: ")) { Console.WriteLine("got " + text); return 0; }
                }
                if (connected && now >= nextHello) { ctx.Send(hello, hello.Length, peer); nextHello = now + 200; }
                Console.Out.Flush();
                now = (ulong)clock.ElapsedMilliseconds;
                Thread.Sleep(next > now ? (int)Math.Min(next - now, 10) : 0);
            }
        }
        return 1;
    }
}
