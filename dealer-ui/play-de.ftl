## Die Seite des Spielers (/play) auf Deutsch: dieselben ids wie play-en.ftl. Eine id,
## die hier fehlt, erscheint auf Englisch.

## Namen der Spiele und Nebenwetten

game-caribbean21 = Caribbean 21
game-deluxe = Deluxe Blackjack
game-infor6 = Blackjack In for 6
game-multihand = Multi-Hand-Blackjack
game-ultimate = Ultimate Blackjack
side-pair = Paar
side-in_for_6 = In for 6
side-21-plus-3 = 21 + 3
side-top_21-plus-3 = Top 21 + 3
side-qq_as_lucky_ladies = Lucky Ladies QQ
side-c3 = C3
side-lucky_aces = Lucky Aces
side-lucky_ladies = Lucky Ladies
side-lucky_lucky = Lucky Lucky
side-match = Match Up
side-a_2 = A–2
side-blackjack_bonus = Blackjack-Bonus
side-poker_3 = Poker 3
side-poker_3_bonus = Poker-3-Bonus
side-kk = KK
side-jj = JJ
side-qq = QQ
side-suits = Farben
side-19_plus = 19+
side-sevens = Siebener

## Die Gewinnkombinationen der Nebenwetten (Regeln): `combo-ID`.
combo-suited_trips = Drilling in Farbe
combo-perfect_pair = Perfektes Paar
combo-colored_pair = Farbiges Paar
combo-mixed_pair = Gemischtes Paar
combo-easy_six = Leichte Sechs
combo-hard_six-exacta = Harte Sechs, gleiche Farbe
combo-hard_six-coloured = Harte Sechs, gleiche Kartenfarbe
combo-hard_six-mixed = Harte Sechs, gemischt
combo-suited_three_of_a_kind = Drilling in einer Farbe
combo-straight_flush = Straight Flush
combo-three_of_a_kind = Drilling
combo-straight = Straße
combo-flush = Flush
combo-queen_of_hearts_pair_with_dealer_blackjack = Paar Herz-Damen mit Blackjack des Gebers
combo-queen_of_hearts_pair = Paar Herz-Damen
combo-matched_20 = Gleiche 20
combo-suited_20 = 20 in einer Farbe
combo-any_20 = Beliebige 20
combo-any_19 = Beliebige 19
combo-highest_hearts = Höchste Herzen
combo-jacks_in_black = Schwarze Buben
combo-triplets = Drilling
combo-red_carpet = Roter Teppich
combo-four_aces = Vier Asse
combo-three_suited_aces = Drei Asse in einer Farbe
combo-three_aces = Drei Asse
combo-two_suited_aces = Zwei Asse in einer Farbe
combo-two_aces = Zwei Asse
combo-ace_of_diamonds = Karo-Ass
combo-one_ace = Ein Ass
combo-suited_777 = 7-7-7 in einer Farbe
combo-suited_678 = 6-7-8 in einer Farbe
combo-777 = 7-7-7
combo-678 = 6-7-8
combo-suited_21 = 21 in einer Farbe
combo-21 = Beliebige 21
combo-two_suited_matches = Zwei Treffer in Farbe
combo-suited_and_non_suited_match = Ein Treffer in Farbe und einer ohne
combo-one_suited_match = Ein Treffer in Farbe
combo-two_non_suited_matches = Zwei Treffer ohne Farbe
combo-one_non_suited_match = Ein Treffer ohne Farbe
combo-one_card_spread = Abstand von einer Karte
combo-two_card_spread = Abstand von zwei Karten
combo-other_spread = Anderer Abstand
combo-suited_blackjack = Blackjack in einer Farbe
combo-same_colour_blackjack = Blackjack in gleicher Kartenfarbe
combo-diamond_pair = Karo-Paar
combo-one_of_rank = Eine Karte des Einsatz-Rangs
combo-suited_pair = Paar in einer Farbe
combo-non_suited_pair = Paar verschiedener Farben
combo-suited_king_queen = König und Dame in einer Farbe
combo-two_suited = Zwei Karten einer Farbe
combo-suited_77 = 7-7 in einer Farbe
combo-77 = 7-7
combo-first_card_7 = Erste Karte eine 7
combo-dealer_natural = Blackjack des Gebers

## Die öffentliche Seite (/public)

seat-bet = Einsatz
shoe-number = Schuh { $shoe }
shoe-out = ausgegeben { $n }
shoe-left = übrig { $n }
public-connecting = Verbinde…
public-round = Runde { $round }
public-betting-open = Einsätze offen
public-under-review = in Prüfung
public-paused = pausiert
public-conn-live = live
public-conn-connecting = verbinde…
public-conn-reconnecting = verbinde neu…
public-results = Ergebnisse
public-no-results = noch keine Ergebnisse
public-cancelled = (abgebrochen, Einsätze erstattet)
public-dealer-total = Croupier { $total }
public-provisional = vorläufig
public-hand = Platz { $seat }{ $hand ->
    [0] {""}
   *[other] /{ $hand }
}

## Tisch

dealer-label = Croupier
seat-label = Platz { $seat }
no-bet = kein Einsatz
no-bets-round = keine Einsätze in dieser Runde
no-round = noch keine Runde
hand-bust = ÜBER
hand-blackjack = BJ
hand-soft = weich { $total }
dealer-blackjack-no = kein Blackjack des Croupiers
dealer-blackjack-yes = Blackjack des Croupiers
outcome-blackjack = Blackjack
outcome-win = gewonnen
outcome-charlie = Charlie
outcome-caribbean21 = Caribbean 21
outcome-push = unentschieden
outcome-lose = verloren
outcome-bust = über 21
outcome-surrender = aufgegeben
outcome-even_money = Even Money
outcome-cancelled = zurück

## Kopfzeile

page-title = { $table } · { $game }
round-number = Runde { $round }
balance = Guthaben
total-bet = Einsatz
session-clock = Sitzung { $time }
menu-help = Regeln
menu-history = Verlauf
menu-language = Sprache
menu-close = Schließen
seat-you = Sie

## Platz nehmen

join-title = Platz nehmen
join-none = Gerade ist kein Platz frei. Warten Sie hier: zwischen den Runden werden Plätze frei.
join-seat = Platz { $seat }
join-taken = Platz { $seat }: besetzt
join-behind = Hinter anderen Spielern setzen
join-table = Am Tisch mitspielen
join-second = Zweiten Platz nehmen
leave = Gehen
left-table = Sie haben den Tisch verlassen. Sie können jederzeit wieder Platz nehmen.
released-away = Von dieser Seite kam { $rounds ->
    [one] eine ganze Runde
   *[other] { $rounds } Runden
} lang kein Lebenszeichen.
released-revoked = Das Casino hat Ihre vorherige Sitzung beendet.
released-expired = Ihre vorherige Sitzung ist abgelaufen.
released-disabled = Ihr Konto wurde gesperrt.
released-seat = { $count ->
    [0] Nach Runde { $round } wurde Ihr Platz am Tisch freigegeben
    [one] Nach Runde { $round } wurde Platz { $seats } freigegeben
   *[other] Nach Runde { $round } wurden die Plätze { $seats } freigegeben
}, und seitdem wurde nichts für Sie gesetzt. Nehmen Sie Platz, um wieder zu spielen.

## Setzen

bets-open = Bitte setzen
bets-close-in = Einsätze noch { $seconds } s
bets-closed = Nichts geht mehr
bets-closed-none = Nichts geht mehr — Sie haben in dieser Runde nicht gesetzt.
chip-tray = Jetons
chip-value = Jeton { $amount }
chip-too-big = Dieser Jeton ist mehr, als Sie noch setzen können ({ $amount }).
spot-main = Haupteinsatz
spot-side = { $name }
spot-behind = Hinter { $seat }
spot-box = Box { $box }
spot-limits = { $min } – { $max }
spot-empty = Tippen
undo = Zurück
clear = Löschen
repeat = Wiederholen { $amount }
double-bets = Verdoppeln
place-bet = Setzen { $amount }
place-behind = Hinter Platz { $seat } setzen: { $amount }
place-boxes = Setzen { $amount }
withdraw = Einsatz zurücknehmen
bet-accepted = Einsatz angenommen: { $amount }
bet-accepted-rebet = Einsatz angenommen: { $amount } (Ihr letzter Einsatz)
bet-accepted-clipped = Einsatz angenommen: { $amount } (Ihr letzter Einsatz, auf Ihr Guthaben gekürzt)
bet-none = Jeton wählen, Feld antippen, dann „Setzen“.
bet-unplaced = Noch nicht gesetzt: Tippen Sie auf „{ $button }“, um den Einsatz zu platzieren.
bet-over-balance = Das wäre mehr als Ihr Guthaben ({ $balance }).
bet-over-max = Höchstens { $max } auf { $line }.
bet-under-min = Mindestens { $min } auf { $line }.
follow-double = Mitverdoppeln
follows-double = verdoppelt mit
follow-split = Mitteilen
special-pick = Zusatzwette
let-it-play = Stehen lassen { $amount }
second-seat-note = Auf zwei Plätzen gilt Ihr Einsatz für beide (gespiegelt oder bei knappem Guthaben gleichmäßig geteilt).
my-seats = Platz { $seat }: { $amount }

## Entscheiden

your-turn = Sie sind dran · Platz { $seat }
your-turn-hand = Sie sind dran · Platz { $seat }, Hand { $hand }
your-box = Box { $box }{ $hand ->
    [0] {""}
   *[other] , Hand { $hand }
}
insurance-question = Der Croupier zeigt ein Ass: Versicherung?
insurance-behind = Hinter Platz { $seat }: Versicherung?
decide-in = { $seconds } s zum Entscheiden
waiting-insurance-others = Andere Spieler entscheiden über die Versicherung…
action-hit = Karte
action-stand = Keine Karte
# Soft hyphens ({"\u00AD"}) where a long word may break in a narrow button (several boxes in one row).
action-double = Ver{"\u00AD"}dop{"\u00AD"}peln
action-split = Teilen
action-surrender = Auf{"\u00AD"}ge{"\u00AD"}ben
action-insurance = Ver{"\u00AD"}si{"\u00AD"}chern
action-no_insurance = Keine Ver{"\u00AD"}si{"\u00AD"}che{"\u00AD"}rung
action-even_money = Even Money
timer-left = noch { $seconds } Sekunden
timeout-stood = Zeit abgelaufen — für Sie bei { $total } geblieben.
timeout-auto = Zeit abgelaufen — für Sie gespielt: { $actions }, dann bei { $total } geblieben.
timeout-insurance = Zeit abgelaufen — Versicherung für Sie abgelehnt.
timeout-hit = Karte
round-in-play = Die Runde läuft — der Croupier gibt.
round-wait-others = Andere Spieler entscheiden…
next-round = Warten auf die nächste Runde…

## Ergebnisse

result-title = Runde { $round }
result-win = Sie gewinnen { $amount }
result-lose = Sie verlieren { $amount }
result-even = Einsatz zurück
result-line = { $line }: { $net }
line-main = Haupteinsatz
line-insurance = Versicherung
line-seat = Platz { $seat }
line-behind = Hinter { $seat }
line-box = Box { $box }
result-cancelled = Runde { $round } wurde abgebrochen: alle Einsätze gingen zurück ({ $amount } an Sie).
result-corrected = Runde { $round } wurde von der Aufsicht berichtigt: Ihr Ergebnis änderte sich von { $before } auf { $after }, Ihr Guthaben also um { $delta }.
result-pending = { $amount } kommen auf Ihr Guthaben, sobald das Ergebnis endgültig ist – in wenigen Sekunden, nach der Frist für Beanstandungen.
net-plus = +{ $amount }
net-minus = −{ $amount }
net-zero = { $amount }

## Verlauf

history-title = Ihre letzten Runden
history-empty = An diesem Tisch noch keine Runde gespielt.
history-round = Runde { $round }
history-stake = Einsatz
history-return = Auszahlung
history-net = Netto
history-cancelled = abgebrochen · Einsätze zurück
history-open = läuft
history-signed = vom Tisch signiert

## Regeln

help-title = So spielen Sie { $game }
help-basics = Ihre Hand gegen die des Croupiers: näher an 21, ohne darüber zu kommen, gewinnt. Karten 2–10 zählen ihren Wert, Bube, Dame und König 10, ein Ass 1 oder 11.
help-decks = { $decks ->
    [one] Ein Deck
   *[other] { $decks } Decks
}{ $fresh ->
    [yes] , in jeder Runde neu gemischt.
   *[no] {"."}
}
help-dealer-s17 = Der Croupier bleibt bei jeder 17 stehen.
help-dealer-h17 = Der Croupier zieht bei weicher 17.
help-blackjack = Blackjack zahlt { $pays }.
help-double = Verdoppeln: { $on }{ $after_split ->
    [yes] , auch nach dem Teilen.
   *[no] {"."}
}
help-double-any_two = auf beliebige erste zwei Karten
help-double-nine_to_eleven = auf erste zwei Karten mit 9, 10 oder 11
help-double-ten_or_eleven = auf erste zwei Karten mit 10 oder 11
help-double-any_cards = auf beliebig viele Karten
help-surrender-never = nicht möglich
help-surrender-first_two_cards = auf den ersten zwei Karten, nachdem der Croupier auf Blackjack geprüft hat
help-surrender-any_time = jederzeit während Ihrer Hand
help-ties-push = Ihr Einsatz kommt zurück
help-ties-lose = der Croupier gewinnt
help-split = Paare teilen in bis zu { $hands } Hände.
help-surrender = Aufgeben: { $when }.
help-insurance = Die Versicherung gegen ein Ass des Croupiers kostet { $cost } des Einsatzes und zahlt { $pays }{ $even ->
    [yes] ; bei Blackjack wird Even Money angeboten.
   *[no] {"."}
}
help-insurance-none = Keine Versicherung.
help-ties = Unentschieden: { $ties }.
help-limits = Einsätze von { $min } bis { $max }.
help-timer = Sie haben { $seconds } s für jede Entscheidung; läuft die Zeit ab, spielt der Tisch Ihre Hand nach der Regel unten.
help-timeout-stand = Bei Zeitablauf bleibt Ihre Hand stehen.
help-timeout-auto = Bei Zeitablauf spielt der Tisch für Sie: Karte bis 11, dann stehen.
help-side-title = { $name } · Auszahlungsquote { $rtp }
help-side-limits = Einsätze von { $min } bis { $max }.
help-paytable-line = { $combination }
help-paytable-pays = zahlt { $pay }
help-paytable-pays-kept = zahlt { $pay }; der Einsatz wird einbehalten
help-rtp-insurance = Versicherung · Auszahlungsquote { $rtp }
help-loading = Regeln werden geladen…
help-unpriced = Die Auszahlungsquote konnte nicht berechnet werden.

## Zustände

state-paused-title = Tisch angehalten
state-paused = Der Tisch ist angehalten, während das Personal etwas prüft. Ihre Einsätze sind sicher; das Spiel geht hier von selbst weiter.
state-disputed-title = Runde wird geprüft
state-disputed = Eine Aufsicht prüft diese Runde. Ihre Einsätze sind sicher; die Entscheidung sehen Sie hier.
state-broken-title = Tisch außer Betrieb
state-broken = Der Tisch ist außer Betrieb. Ihre Einsätze sind sicher und werden abgerechnet oder erstattet.
state-closed-title = Tisch geschlossen
state-closed = Das Fernspiel an diesem Tisch ist geschlossen. Ihr Guthaben ist sicher.
state-expired-title = Sitzung beendet
state-expired = Ihre Sitzung ist beendet. Öffnen Sie das Spiel erneut im Casino, um weiterzuspielen.
state-lost-title = Verbindung unterbrochen
state-lost = Neue Verbindung… (Versuch { $attempt }). Ihre Einsätze sind sicher: Was der Tisch inzwischen tut, folgt seinen Regeln und erscheint hier, sobald Sie zurück sind.
state-lost-balance = Ihr Guthaben erscheint wieder, sobald die Verbindung steht.
state-no-token = Öffnen Sie das Spiel im Casino, um zu spielen.
state-connecting = Verbinde…

## Realitätscheck

reality-title = Realitätscheck
reality-body = Sie spielen seit { $minutes ->
    [one] einer Minute
   *[other] { $minutes } Minuten
}. Ihr Nettoergebnis in dieser Sitzung: { $net }.
reality-continue = Weiterspielen
reality-leave = Gehen

## Fehler

error-network = Keine Verbindung zum Tisch. Neuer Versuch…
error-unknown = Das hat nicht geklappt. Bitte noch einmal versuchen.
error-malformed = Das hat nicht geklappt. Seite neu laden und noch einmal versuchen.
error-unauthenticated = Ihre Sitzung ist beendet. Öffnen Sie das Spiel erneut im Casino.
error-no_remote_play = Das Fernspiel an diesem Tisch ist geschlossen.
error-insufficient_funds = Dafür reicht Ihr Guthaben nicht: es beträgt { $balance }.
error-wallet_conflict = Ihr Konto bearbeitet gerade eine andere Anfrage. Gleich noch einmal versuchen.
error-wallet_rolled_back = Ihr Konto hat diesen Einsatz zurückgebucht; er wurde nicht gesetzt. Noch einmal versuchen.
error-wallet_unavailable = Ihr Konto antwortet nicht. Der Einsatz wurde nicht gesetzt; gleich noch einmal versuchen.
error-unknown_player = Das Casino kennt Ihr Konto hier nicht. Öffnen Sie das Spiel erneut im Casino.
error-player_disabled = Ihr Konto ist für das Spiel gesperrt. Wenden Sie sich an das Casino.
error-invalid_player = Ihr Konto kann hier nicht spielen. Wenden Sie sich an das Casino.
error-unavailable = Der Tisch konnte das gerade nicht ausführen. Noch einmal versuchen.
error-betting_closed = Zu spät: nichts geht mehr in dieser Runde.
error-not_taking_bets = Der Tisch nimmt gerade keine Einsätze an.
error-invalid_bet = Dieser Einsatz ist hier nicht erlaubt: Einsätze von { $min } bis { $max }{ $side ->
    [yes] , Zusatzwetten nur mit Haupteinsatz und in ihren eigenen Grenzen
   *[no] {""}
}.
error-unknown_side_bet = Diese Zusatzwette gibt es an diesem Tisch nicht.
error-decision_closed = Zu spät: die Zeit für diese Entscheidung ist abgelaufen.
error-action_not_allowed = Dieser Zug ist für diese Hand jetzt nicht erlaubt.
error-not_your_turn = Sie sind nicht an der Reihe.
error-no_seat = Nehmen Sie zuerst Platz.
error-no_seats = Dieses Spiel hat keine Plätze: am Tisch mitspielen und auf Boxen setzen.
error-seat_unavailable = Dieser Platz ist nicht für Fernspieler.
error-seat_taken = Jemand hat diesen Platz gerade genommen. Wählen Sie einen anderen.
error-already_seated = Sie haben schon so viele Plätze, wie dieses Spiel erlaubt.
error-seat_in_play = Sie haben einen Einsatz im Spiel: verlassen Sie den Tisch nach der Runde.
error-seat_empty = Auf diesem Platz wurde in dieser Runde nicht gesetzt; dahinter setzen geht nicht.
error-own_seat = Hinter dem eigenen Platz setzen geht nicht.
error-not_your_seat = Das ist nicht Ihr Platz.
error-no_play_behind = In diesem Spiel kann man nicht hinter anderen setzen.
error-follow_unavailable = Mitverdoppeln oder Mitteilen ist hier nicht möglich.
error-not_common_draw = Dieses Spiel hat keine Boxen.
error-common_draw = Dieses Spiel wird auf Boxen gespielt: am Tisch mitspielen und auf Boxen setzen.
error-json_required = Das hat nicht geklappt. Seite neu laden und noch einmal versuchen.
error-forbidden = Das ist für Spieler nicht möglich.
error-busy = Am Tisch ist gerade viel los. Neuer Versuch…
error-box_out_of_range = Diese Box gibt es nicht.
error-no_let_it_play = Dieses Spiel hat kein „Stehen lassen“.
error-let_it_play_no_win = „Stehen lassen“ braucht einen Gewinn auf dieser Box in der letzten Runde.
error-let_it_play_over_limit = Dieser Gewinn liegt über der Grenze für „Stehen lassen“.
error-locked = Der Tisch ist angehalten: versuchen Sie es, wenn das Spiel weitergeht.
error-disputed = Die Runde wird geprüft: versuchen Sie es, wenn das Spiel weitergeht.
error-round_provisional = Die letzte Runde wird noch bestätigt: in ein paar Sekunden noch einmal.
error-out_of_service = Der Tisch ist außer Betrieb.
error-stopped = Der Tisch ist geschlossen.
error-card_not_expected = Der Tisch war dafür nicht bereit. Noch einmal versuchen.
error-impossible_card = Der Tisch war dafür nicht bereit. Noch einmal versuchen.
error-burn_incomplete = Der Croupier verbrennt noch Karten: gleich noch einmal versuchen.
error-shoe_finished = Der Croupier wechselt den Schlitten: gleich noch einmal versuchen.
## Was die Seite selbst prüft (trust.js)
trust-seal-sealed = verdeckte Karte versiegelt · { $commitment }
trust-seal-verified = ✓ Siegel der verdeckten Karte geprüft
trust-seal-corrected = ✓ Siegel der verdeckten Karte geprüft · ein Supervisor hat die Karte von { $from } auf { $to } korrigiert
trust-seal-mismatch = ⚠ SIEGEL STIMMT NICHT
trust-seal-checking = Siegel wird geprüft…
trust-seal-unchecked = Siegel nicht geprüft (diese Seite braucht HTTPS)
trust-seal-title = Commitment { $commitment }
trust-sig-verified = ✓ signiert
trust-sig-invalid = ⚠ SIGNATUR UNGÜLTIG
trust-sig-unsigned = ⚠ nicht signiert
trust-alarm-title = ⚠ Prüfung fehlgeschlagen:
trust-timeline-title = Verlauf des Tisches wiederhergestellt:
trust-key-changed = der Schlüssel des Tisches hat sich geändert
trust-commitment-changed = Runde { $round }: das Commitment der verdeckten Karte hat sich geändert
trust-timeline-back = die Zeitlinie des Tisches ging zurück
trust-restored = der Verlauf des Tisches wurde ab seiner Zeile { $row } wiederhergestellt oder fortgesetzt: die Runden danach werden neu gespielt und neu geprüft
trust-failed = Prüfung fehlgeschlagen: { $error }
trust-missing-result = Runde { $round }: kein Ergebnis veröffentlicht
trust-missing-results = Runden { $from }–{ $to }: kein Ergebnis veröffentlicht
trust-revealed-mismatch = Runde { $round }: die aufgedeckte Karte { $card } passt nicht zu ihrem Siegel
trust-unsigned = Runde { $round }: das Ergebnis ist nicht signiert
trust-bad-signature = Runde { $round }: die Signatur des Ergebnisses ist ungültig
trust-no-seal = Runde { $round }: die verdeckte Karte war versiegelt, das signierte Ergebnis öffnet kein Siegel
trust-signed-mismatch = Runde { $round }: die signierte verdeckte Karte passt nicht zu ihrem Siegel

## Für Bildschirmleser gesprochen (die Live-Regionen): Karten, Summen, Ergebnisse, Halte

card-name = { $suit ->
    [spades] Pik
    [hearts] Herz
    [diamonds] Karo
   *[clubs] Kreuz
}-{ $rank ->
    [ace] Ass
    [king] König
    [queen] Dame
    [jack] Bube
   *[number] { $number }
}
card-face-down = verdeckte Karte
say-total = { $kind ->
    [blackjack] Blackjack
    [bust] { $total }, überkauft
    [soft] weich { $total }
   *[hard] { $total }
}
say-hand = { $who }: { $cards }
say-seat-hand = Platz { $seat }, Hand { $hand }
say-result = Runde { $round }: { $result }
say-halt = { $title }. { $text }
say-resumed = Das Spiel geht weiter.
dock-label = Ihr Spiel
mute = Stumm
mute-label = Töne und Vibration aus

## Die Lobby des Relays (die Seite `/` von `croupier relay`)

lobby-title = croupier · Live-Tische
lobby-heading = Tische
lobby-col-table = Tisch
lobby-col-game = Spiel
lobby-col-limits = Einsätze
lobby-col-seats = Freie Plätze
lobby-col-state = Status
lobby-col-round = Runde
lobby-col-news = Zuletzt gehört
lobby-none = Noch sendet kein Tisch an dieses Relay.
lobby-state-open = Offen
lobby-state-locked = Pausiert (der Croupier korrigiert eine Karte)
lobby-state-disputed = Pausiert (ein Ergebnis wird geprüft)
lobby-state-broken = Außer Betrieb
lobby-state-quiet = Keine Nachricht — nicht live
lobby-ago-now = gerade eben
lobby-ago-s = vor { $n } s
lobby-ago-min = vor { $n } min
lobby-ago-h = vor { $n } h
lobby-side-bets = { $main } · Nebenwetten { $side }
lobby-seats-free = { $free } von { $seats }
lobby-seats-common = kein Platz nötig
lobby-error = Das Relay antwortet nicht ({ $error }); neuer Versuch.

language-en = English
language-de = Deutsch
language-fr = Français
