// A Unity-style host over the Rendezvous binding: keep the listing's
// presence, accept and punch joiners, echo every game datagram. The REST
// answer's fields come as arguments (the game's own HTTP client makes the
// calls). Prints one line per event; never prints the token.
//   mono Host.exe MEDIATOR PRESENCE_HANDLE PRESENCE_TOKEN INTERVAL_S SECONDS
using System;
using System.Diagnostics;
using System.Text;
using System.Threading;
using Rendezvous;

static class HostExample
{
    static int Main(string[] args)
    {
        var clock = Stopwatch.StartNew();
        var deadline = ulong.Parse(args[4]) * 1000;
        using (var ctx = new Context("127.0.0.1:0"))
        {
            ctx.HostStart((ulong)clock.ElapsedMilliseconds, args[0], args[1], args[2], uint.Parse(args[3]));
            Console.WriteLine("listening " + ctx.LocalEndpoint);
            var buf = new byte[1200];
            var prefix = Encoding.ASCII.GetBytes("echo: ");
            while ((ulong)clock.ElapsedMilliseconds < deadline)
            {
                ulong now = (ulong)clock.ElapsedMilliseconds;
                ulong next = ctx.Update(now); // one call per tick: timers, socket, punch
                Event ev;
                while (ctx.TryNextEvent(out ev))
                {
                    switch (ev.Type)
                    {
                        case EventType.Presence: Console.WriteLine("presence " + ev.Addr); break;
                        case EventType.Attempt: Console.WriteLine("attempt " + ev.HandleText()); break;
                        case EventType.Introduced: Console.WriteLine("introduced " + ev.HandleText() + " " + ev.Addr); break;
                        case EventType.Connected:
                            Console.WriteLine("connected " + ev.HandleText() + " " + ev.Addr + " path=" + ev.Path);
                            break;
                        case EventType.Failed: Console.WriteLine("failed " + ev.HandleText() + " " + (Error)ev.Code); break;
                        case EventType.Rejected: Console.WriteLine("rejected " + ev.HandleText() + " " + ev.Code); break;
                        case EventType.Reported: Console.WriteLine("reported " + ev.HandleText()); break;
                    }
                }
                int n;
                Endpoint from;
                while (ctx.TryReceive(buf, out n, out from))
                {
                    var reply = new byte[prefix.Length + n];
                    Buffer.BlockCopy(prefix, 0, reply, 0, prefix.Length);
                    Buffer.BlockCopy(buf, 0, reply, prefix.Length, n);
                    ctx.Send(reply, reply.Length, from);
                }
                Console.Out.Flush();
                now = (ulong)clock.ElapsedMilliseconds;
                Thread.Sleep(next > now ? (int)Math.Min(next - now, 10) : 0);
            }
        }
        return 0;
    }
}
